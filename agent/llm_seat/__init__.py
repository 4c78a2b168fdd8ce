"""The parts of the LLM seat (:class:`agent.llm_player.LLMPlayer`), one layer per module:
:mod:`~agent.llm_seat.settings` its knobs, :mod:`~agent.llm_seat.planning` latencies and call
kinds, :mod:`~agent.llm_seat.core` its state, model calls, decision log and timers,
:mod:`~agent.llm_seat.votes` votes and night actions, :mod:`~agent.llm_seat.floor` the shadow
baseline's fallbacks and the never-mute floor, :mod:`~agent.llm_seat.talk` consulting,
writing and typing lines."""
