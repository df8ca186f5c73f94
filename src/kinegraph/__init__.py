"""kinegraph: do deterministic physical tools make VLMs reason better about motion?"""

__version__ = "0.1.0"
__all__ = ["__version__"]
