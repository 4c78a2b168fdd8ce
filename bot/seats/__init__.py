"""Who plays an agent seat: the offline baseline or the LLM agent (`agents`), LLM seats built
from settings with their clients and budgets (`llm_agents`), and the LLM agent's experience
pool and strategy notes in the database (`experience_store`)."""
