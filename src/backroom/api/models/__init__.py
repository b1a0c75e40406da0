"""The wire format: pydantic models of request and response bodies, for validation and OpenAPI."""
