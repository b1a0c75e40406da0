"""`backroom mock-llm` and the offline provider: an OpenAI-compatible server for tests and demos."""
