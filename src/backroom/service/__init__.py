"""The one operations layer, free of any web framework: used by the API, the CLI and dashboard."""
