"""Pure torch models for Shaomai Lab. Never imports fastapi, pydantic or backend."""
