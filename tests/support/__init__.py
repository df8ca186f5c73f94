"""Helpers shared by the tests: small worlds on disk, loopback models that read prompts, user graphs."""
