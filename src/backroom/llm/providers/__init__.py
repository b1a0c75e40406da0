"""LLM providers behind `backroom.llm`: the wire protocol and SDK of each."""
