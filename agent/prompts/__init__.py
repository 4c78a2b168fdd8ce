"""Prompt templates for the LLM agent, one file per prompt; loaded by :mod:`agent.prompting`.

Each file is plain text with ``$name`` fields (:class:`string.Template`). A line reading
``--- user ---`` splits a file into its static system part (sent as ``LLMRequest.system``, the
same on every call so provider prompt caching applies) and its per-call user message.
Edit the wording freely; keep the field names. ``$memory`` (the seat's memory block, see
:mod:`agent.memory.seatmind`) follows ``$status`` directly: it is empty for a seat without
memory, and otherwise starts with its own line break.

The memory and learning prompts (``reflect_questions``, ``reflect_answers``, ``suspicion``,
``suggestion``, ``lessons``, ``strategy``) each open their system part with a distinct "Your
job right now is ..." sentence; tests that script a model tell the prompts apart by it.
"""
