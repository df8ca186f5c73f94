"""STSBench scenario types of other road users, derived from their trajectories (synthetic worlds).

Names and negatives are upstream's (LRP-IVC/STSBench@38c5174, `annotator/mining/consts.py`):
`short_maneuver_description` with the default "ego"/"agent" words, as `vqa_extractor/hf.py` writes
STSnu.json (its "passes stationary" wording kept), and `NEGATIVE_MANEUVERS` in upstream's order (the
option draw favours earlier negatives). Thresholds on speed and heading follow upstream's ego miner
(`annotator/mining/ego.py`: a turn changes heading by more than 0.8 rad, a stop ends below 0.55 m/s
after losing more than 3 m/s); the relational and pedestrian rules are this module's own.
"""

from __future__ import annotations

import numpy as np

from kinegraph.benchmarks.synthetic.road_users import Road, RoadUser

_ACTOR_VERB = {
    "ACCELERATE": "is accelerating",
    "DECELERATE": "is decelerating",
    "LANE_CHANGE": "is changing lanes",
    "LEFT_TURN": "is turning left",
    "RIGHT_TURN": "is turning right",
    "U_TURN": "is performing u-turn",
    "REVERSE": "is reversing",
    "STOP": "is stopping",
    "OVERTAKE_AGENT": "is overtaking agent",
    "WAIT_PED_CROSS": "is waiting for pedestrian to cross",
    "FOLLOW_AGENT": "is following agent",
    "LEAD_AGENT": "is leading agent",
    "PASS_AGENT": "is passes stationary agent",  # upstream's wording
    "STATIONARY_BEHIND_AGENT": "is stationary behind agent",
    "STATIONARY_IN_FRONT_OF_AGENT": "is stationary in front of agent",
    "STATIONARY_RIGHT_OF_AGENT": "is stationary to the right of agent",
    "STATIONARY_LEFT_OF_AGENT": "is stationary to the left of agent",
    "MOVING_RIGHT_OF_AGENT": "is moving to the right of agent",
    "MOVING_LEFT_OF_AGENT": "is moving to the left of agent",
}
# Types that only ever describe an agent (the ego is the reference, or the actor is a pedestrian).
_AGENT_ONLY = {
    "OVERTAKE_EGO": "is overtaking ego",
    "FOLLOW_EGO": "is following ego",
    "LEAD_EGO": "is leading ego",
    "PASS_EGO": "is passing stationary ego",
    "STATIONARY_BEHIND_EGO": "is stationary behind ego",
    "STATIONARY_IN_FRONT_OF_EGO": "is stationary in front of ego",
    "STATIONARY_RIGHT_OF_EGO": "is stationary to the right of ego",
    "STATIONARY_LEFT_OF_EGO": "is stationary to the left of ego",
    "MOVING_RIGHT_OF_EGO": "is moving to the right of ego",
    "MOVING_LEFT_OF_EGO": "is moving to the left of ego",
    "CROSS": "is crossing street",
    "JAYWALK": "is jaywalking",
    "RUN": "is running",
    "WALK": "is walking",
    "STAND": "is standing",
    "WALK_ALONGSIDE": "is walking alongside agent",
    "WALK_OPPOSITE": "is walking in opposite direction of agent",
}
NEGATIVES: dict[str, tuple[str, ...]] = {
    "OVERTAKE_EGO": (
        "PASS_EGO",
        "MOVING_LEFT_OF_EGO",
        "MOVING_RIGHT_OF_EGO",
        "STATIONARY_LEFT_OF_EGO",
        "STATIONARY_RIGHT_OF_EGO",
        "FOLLOW_EGO",
        "LEAD_EGO",
        "STATIONARY_IN_FRONT_OF_EGO",
        "STATIONARY_BEHIND_EGO",
        "ACCELERATE",
        "DECELERATE",
        "LANE_CHANGE",
        "LEFT_TURN",
        "RIGHT_TURN",
        "U_TURN",
        "REVERSE",
        "STOP",
    ),
    "LEAD_EGO": (
        "STATIONARY_IN_FRONT_OF_EGO",
        "FOLLOW_EGO",
        "STATIONARY_BEHIND_EGO",
        "PASS_EGO",
        "OVERTAKE_EGO",
        "STATIONARY_LEFT_OF_EGO",
        "STATIONARY_RIGHT_OF_EGO",
        "MOVING_LEFT_OF_EGO",
        "MOVING_RIGHT_OF_EGO",
        "ACCELERATE",
        "DECELERATE",
        "LANE_CHANGE",
        "LEFT_TURN",
        "RIGHT_TURN",
        "U_TURN",
        "REVERSE",
        "STOP",
    ),
    "CROSS": (
        "JAYWALK",
        "RUN",
        "WALK",
        "STAND",
        "ACCELERATE",
        "DECELERATE",
        "STOP",
    ),
    "STAND": (
        "CROSS",
        "JAYWALK",
        "WALK",
        "RUN",
        "ACCELERATE",
        "DECELERATE",
        "STOP",
    ),
    "WALK": (
        "CROSS",
        "JAYWALK",
        "STAND",
        "RUN",
        "ACCELERATE",
        "DECELERATE",
        "STOP",
    ),
    "RUN": (
        "CROSS",
        "JAYWALK",
        "WALK",
        "STAND",
        "ACCELERATE",
        "DECELERATE",
        "STOP",
    ),
    "LEFT_TURN": (
        "DECELERATE",
        "LANE_CHANGE",
        "RIGHT_TURN",
        "U_TURN",
        "STOP",
        "REVERSE",
        "ACCELERATE",
    ),
    "RIGHT_TURN": (
        "DECELERATE",
        "LANE_CHANGE",
        "LEFT_TURN",
        "U_TURN",
        "STOP",
        "REVERSE",
        "ACCELERATE",
    ),
    "STOP": (
        "DECELERATE",
        "LEFT_TURN",
        "RIGHT_TURN",
        "U_TURN",
        "LANE_CHANGE",
        "REVERSE",
        "ACCELERATE",
    ),
    "FOLLOW_AGENT": (
        "STATIONARY_BEHIND_AGENT",
        "LEAD_AGENT",
        "STATIONARY_IN_FRONT_OF_AGENT",
        "PASS_AGENT",
        "OVERTAKE_AGENT",
        "MOVING_LEFT_OF_AGENT",
        "MOVING_RIGHT_OF_AGENT",
        "STATIONARY_LEFT_OF_AGENT",
        "STATIONARY_RIGHT_OF_AGENT",
        "WAIT_PED_CROSS",
        "ACCELERATE",
        "DECELERATE",
        "STOP",
        "LANE_CHANGE",
        "U_TURN",
        "REVERSE",
        "LEFT_TURN",
        "RIGHT_TURN",
    ),
    "OVERTAKE_AGENT": (
        "PASS_AGENT",
        "MOVING_LEFT_OF_AGENT",
        "MOVING_RIGHT_OF_AGENT",
        "STATIONARY_LEFT_OF_AGENT",
        "STATIONARY_RIGHT_OF_AGENT",
        "LEAD_AGENT",
        "FOLLOW_AGENT",
        "STATIONARY_IN_FRONT_OF_AGENT",
        "STATIONARY_BEHIND_AGENT",
        "WAIT_PED_CROSS",
        "ACCELERATE",
        "DECELERATE",
        "STOP",
        "LANE_CHANGE",
        "U_TURN",
        "REVERSE",
        "LEFT_TURN",
        "RIGHT_TURN",
    ),
    "STATIONARY_BEHIND_AGENT": (
        "FOLLOW_AGENT",
        "LEAD_AGENT",
        "STATIONARY_IN_FRONT_OF_AGENT",
        "PASS_AGENT",
        "OVERTAKE_AGENT",
        "MOVING_LEFT_OF_AGENT",
        "MOVING_RIGHT_OF_AGENT",
        "STATIONARY_LEFT_OF_AGENT",
        "STATIONARY_RIGHT_OF_AGENT",
        "WAIT_PED_CROSS",
        "ACCELERATE",
        "DECELERATE",
        "STOP",
        "LANE_CHANGE",
        "U_TURN",
        "REVERSE",
        "LEFT_TURN",
        "RIGHT_TURN",
    ),
    "WAIT_PED_CROSS": (
        "PASS_AGENT",
        "OVERTAKE_AGENT",
        "OVERTAKE_EGO",
        "FOLLOW_AGENT",
        "LEAD_AGENT",
        "FOLLOW_EGO",
        "LEAD_EGO",
        "DECELERATE",
        "LEFT_TURN",
        "RIGHT_TURN",
        "STOP",
        "REVERSE",
        "U_TURN",
    ),
    "WALK_ALONGSIDE": (
        "WALK_OPPOSITE",
        "OVERTAKE_AGENT",
        "PASS_AGENT",
        "RUN",
        "STAND",
        "CROSS",
        "JAYWALK",
    ),
}

STOPPED_MPS = 0.3
MOVING_MPS = 1.0
TURN_RAD = 0.8  # upstream's ego miner
STOP_END_MPS = 0.55  # upstream's ego miner
STOP_LOSS_MPS = 3.0  # upstream's ego miner
CROSSING_M = 3.0
SAME_LANE_M = 1.5
ADJACENT_LANE_M = 5.0
STEADY_GAP_M = 3.0
OVERTAKE_GAIN_M = 5.0
RUN_MPS = 2.5


def describe(maneuver: str, is_ego: bool) -> str:
    """Upstream's short description of `maneuver` for an ego (is_ego) or an agent record."""
    if maneuver in _AGENT_ONLY:
        return f"Agent {_AGENT_ONLY[maneuver]}"
    return f"{'Ego' if is_ego else 'Agent'} {_ACTOR_VERB[maneuver]}"


def negatives(maneuver: str, is_ego: bool) -> list[str]:
    """Upstream's negatives of `maneuver`, described as hf.py writes them."""
    return [describe(n, is_ego) for n in NEGATIVES[maneuver]]


def _own_maneuver(user: RoadUser, road: Road) -> str | None:
    """What the user does on its own: pedestrians cross, stand, run or walk; vehicles turn or stop."""
    speed = user.speed_mps()
    if user.category == "pedestrian":
        _, d = road.locate(user.xy_m)
        if abs(d[-1] - d[0]) >= CROSSING_M:
            return "CROSS"
        if speed.max() < STOPPED_MPS:
            return "STAND"
        return "RUN" if speed.mean() > RUN_MPS else "WALK"
    turn = float(user.yaw_rad[-1] - user.yaw_rad[0])
    if abs(turn) > TURN_RAD:
        return "LEFT_TURN" if turn > 0 else "RIGHT_TURN"
    if speed[0] - speed[-1] > STOP_LOSS_MPS and speed[-1] < STOP_END_MPS:
        return "STOP"
    return None


def _relation(actor: RoadUser, reference: RoadUser, road: Road) -> str | None:
    """The actor's behaviour with respect to the reference (`..._AGENT` names; the caller renames)."""
    s_a, d_a = road.locate(actor.xy_m)
    s_r, d_r = road.locate(reference.xy_m)
    forward = np.sign(np.cos(reference.yaw_rad[0] - road.heading_rad(s_r[:1])[0])) or 1.0
    gap, lateral = forward * (s_a - s_r), d_a - d_r
    v_a, v_r = actor.speed_mps(), reference.speed_mps()
    same_lane = bool(np.all(np.abs(lateral) < SAME_LANE_M))
    adjacent = bool(np.all((np.abs(lateral) >= SAME_LANE_M) & (np.abs(lateral) < ADJACENT_LANE_M)))
    if actor.category == reference.category == "pedestrian":
        return "WALK_ALONGSIDE" if np.all(np.abs(gap) < 2.0) and v_a.min() > STOPPED_MPS else None
    if reference.category == "pedestrian":
        crossing = abs(road.locate(reference.xy_m)[1][-1] - road.locate(reference.xy_m)[1][0]) >= CROSSING_M
        return "WAIT_PED_CROSS" if v_a.max() < STOPPED_MPS and crossing and np.all(gap < 0) else None
    if v_a.max() < STOPPED_MPS and v_r.max() < STOPPED_MPS and same_lane:
        return "STATIONARY_BEHIND_AGENT" if np.all(gap < 0) else "STATIONARY_IN_FRONT_OF_AGENT"
    if v_a.min() < MOVING_MPS or v_r.min() < MOVING_MPS:
        return None
    if adjacent and gap[-1] - gap[0] > OVERTAKE_GAIN_M and gap[-1] > 0:  # moves ahead in the next lane
        return "OVERTAKE_AGENT"
    if same_lane and np.ptp(gap) < STEADY_GAP_M:
        return "FOLLOW_AGENT" if np.all(gap < 0) else ("LEAD_AGENT" if np.all(gap > 0) else None)
    return None


_EGO_NAMES = {
    "OVERTAKE_AGENT": "OVERTAKE_EGO",
    "FOLLOW_AGENT": "FOLLOW_EGO",
    "LEAD_AGENT": "LEAD_EGO",
    "STATIONARY_BEHIND_AGENT": "STATIONARY_BEHIND_EGO",
    "STATIONARY_IN_FRONT_OF_AGENT": "STATIONARY_IN_FRONT_OF_EGO",
}


def agent_scenario(agent: RoadUser, ego: RoadUser, road: Road) -> str | None:
    """An agent record's type: its own maneuver, else its behaviour with respect to the ego."""
    own = _own_maneuver(agent, road)
    if own is not None:
        return own
    relation = _relation(agent, ego, road)
    return _EGO_NAMES.get(relation or "", None)


def ego_agent_scenario(ego: RoadUser, other: RoadUser, road: Road) -> str | None:
    """An ego record's type with respect to another agent (`..._AGENT` names)."""
    return _relation(ego, other, road)


def agent_agent_scenario(agent: RoadUser, other: RoadUser, road: Road) -> str | None:
    """A two-agent record's type: the first agent's behaviour with respect to the other."""
    return _relation(agent, other, road)
