"""The baseline player, offline and without a model: the default agent when no LLM is
configured and the yardstick evaluations compare against.

One job per module: :mod:`~agent.baseline.ledger` records what the table hears,
:mod:`~agent.baseline.scores` turns that record into suspicion and danger (plain functions,
also used by the LLM agent), :mod:`~agent.baseline.targets` picks whom to name (plain
functions too), :mod:`~agent.baseline.seat` holds what one seat knows and its reads,
:mod:`~agent.baseline.hearing` takes events into it, :mod:`~agent.baseline.timing` holds
people's timing, :mod:`~agent.baseline.talk` plans when a line comes and
:mod:`~agent.baseline.speech` what it says (from a :mod:`~agent.baseline.view` of the seat,
never the policy itself), :mod:`~agent.baseline.voting` and :mod:`~agent.baseline.acting`
plan votes and night actions, and :mod:`~agent.baseline.policy` is the flow that runs them as
one seat's play (and a whole table's, for fast simulations).
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
