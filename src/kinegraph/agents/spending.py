"""A spending limit that refuses a request before it could cross the budget, not after.

Each request reserves its worst-case cost (`estimate.worst_case_cost_usd`) before it is sent; a request
whose reservation, added to what was spent and what requests in flight reserved, would pass the budget
is refused with status `budget_exceeded`. When it returns, the reservation becomes the actual cost.
"""

from __future__ import annotations

from typing import Any

from kinegraph.agents.errors import BackendError
from kinegraph.agents.estimate import worst_case_cost_usd
from kinegraph.agents.pricing import PriceTable
from kinegraph.agents.protocol import GenerateRequest, GenerateResponse
from kinegraph.types import Status


class SpendingLimit:
    """`budget_usd` shared by every request that reserves against it (one run, one backend)."""

    def __init__(self, budget_usd: float) -> None:
        if budget_usd < 0:
            raise ValueError(f"a budget must be >= 0 USD, got {budget_usd}")
        self.budget_usd = budget_usd
        self.spent_usd = 0.0
        self.reserved_usd = 0.0

    def reserve(self, bound_usd: float, spec: str) -> None:
        """Hold `bound_usd` for one request, or refuse it (BackendError, status budget_exceeded)."""
        if self.spent_usd + self.reserved_usd + bound_usd > self.budget_usd:
            raise BackendError(
                f"{spec}: budget of ${self.budget_usd:g} would be crossed (spent ${self.spent_usd:.4f}, "
                f"${self.reserved_usd:.4f} held by requests in flight, this request up to "
                f"${bound_usd:.4f}); no further requests",
                status=Status.budget_exceeded,
            )
        self.reserved_usd += bound_usd

    def settle(self, bound_usd: float, cost_usd: float) -> None:
        """Release a reservation and count what the request actually cost (0 when it failed)."""
        self.reserved_usd = max(0.0, self.reserved_usd - bound_usd)
        self.spent_usd += max(0.0, cost_usd)  # never a credit, whatever a server's usage said


class BudgetedBackend:
    """Any backend behind a `SpendingLimit`; other attributes are the wrapped backend's."""

    def __init__(self, inner: Any, limit: SpendingLimit, prices: PriceTable | None = None) -> None:
        self.inner = inner
        self.provider: str = inner.provider
        self.model: str = inner.model
        self.limit = limit
        self.prices = prices or getattr(inner, "prices", None) or PriceTable.load()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def __repr__(self) -> str:
        return f"<budget ${self.limit.budget_usd:g} {self.inner!r}>"

    async def generate(self, request: GenerateRequest) -> GenerateResponse:
        bound = worst_case_cost_usd(self.prices, self.provider, self.model, request)
        self.limit.reserve(bound, f"{self.provider}:{self.model}")
        cost = 0.0
        try:
            response = await self.inner.generate(request)
            cost = response.usage.cost_usd
            return response
        finally:
            self.limit.settle(bound, cost)
