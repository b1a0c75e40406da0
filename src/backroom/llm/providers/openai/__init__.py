"""OpenAI-compatible providers through the `openai` SDK: Responses API and chat completions."""
