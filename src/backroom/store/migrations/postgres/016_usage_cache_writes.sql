-- Prompt-cache writes per call (Anthropic bills them above the input price, a read
-- below it): part of input_tokens, as cached_tokens (the reads) are.
ALTER TABLE llm_usage ADD COLUMN cache_write_tokens BIGINT NOT NULL DEFAULT 0;
