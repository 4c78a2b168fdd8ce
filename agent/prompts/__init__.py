"""Prompt templates for the LLM agent, one file per prompt; loaded by :mod:`agent.prompting`.

Each file is plain text with ``$name`` fields (:class:`string.Template`). A line reading
``--- user ---`` splits a file into its static system part (sent as ``LLMRequest.system``, the
same on every call so provider prompt caching applies) and its per-call user message.
Edit the wording freely; keep the field names.
"""
