"""The baseline player, offline and without a model: the default agent when no LLM is
configured and the yardstick evaluations compare against.

One job per module: :mod:`~agent.baseline.ledger` records what the table hears,
:mod:`~agent.baseline.scores` turns that record into suspicion and danger (plain functions,
also used by the LLM agent), :mod:`~agent.baseline.timing` decides when a line comes,
:mod:`~agent.baseline.speech` what it says (from a :mod:`~agent.baseline.view` of the seat
the policy fills, never the policy itself), and :mod:`~agent.baseline.policy` orchestrates
them into one seat's play (and a whole table's, for fast simulations).
"""

from agent.baseline.ledger import TableLedger
from agent.baseline.policy import BASELINE_NAME, BaselinePolicy, BaselineTable
from agent.baseline.scores import SeatRecord, activity, danger, suspicion
from agent.baseline.timing import BaselineTiming

__all__ = [
    "BASELINE_NAME",
    "BaselinePolicy",
    "BaselineTable",
    "BaselineTiming",
    "SeatRecord",
    "TableLedger",
    "activity",
    "danger",
    "suspicion",
]
