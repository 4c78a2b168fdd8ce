"""Rate limits that keep a game fair, and the fair queue the stage is posted from.

Everything here is plain bookkeeping with the time passed in, so the service and the delivery
queues of every platform share one implementation (no adapter has a limit of its own):

- `LineLimiter`: a token bucket per seat on the lines a seat relays to the game. Humans and
  agents go through the same bucket (both speak through `GameService.say`). The figures
  come from the 15 LLMafia games: a person writes 1-3 lines a minute on average, but short
  fragments come in bursts: up to 12 lines in 10 seconds and 24 in one minute for the busiest
  player. A burst of `LINE_BURST` (10) with `LINE_RATE` (0.5 lines a second, 30 a minute)
  refuses none of the 1,576 lines of those games, while a player pasting 20 lines a second
  gets 10 through and then one line every two seconds. A refused line gets a note to its
  writer (`LineLimited`), at most one every `NOTE_EVERY` seconds per seat; the others are
  dropped quietly, so the notes do not become a flood of their own.
- `ChangeLimiter`: a token bucket per seat on changes of a vote already cast. Each vote is
  announced where it was cast (the stage, or the den at night) by the Game-Manager, whose
  posts go before everyone's lines: a player flipping their vote twenty times a second would
  otherwise hold every other line back. People rarely change a vote more than twice (in the
  LLMafia games each person cast one); `CHANGE_BURST` (4) changes go through at once, then
  one every `CHANGE_EVERY` (5) seconds. A first vote is never limited. A refused change
  leaves the vote as it was and its voter is told when to try again (`ChangeLimited`).
- `Cooldowns`: a minimum pause per user between two uses of a costly command (opening a
  lobby, withdrawing consent, any slash command).
- `CommandLimiter`: a token bucket per person and server on everything they ask of the bot
  by command (Discord's slash commands and lobby buttons, Slack's ``/mafia`` and lobby
  buttons: each costs writes and posts). A host opening a game, configuring it twice and
  starting it uses 4 in a minute; `COMMAND_BURST` (5) lets that through at once, then
  one every `COMMAND_EVERY` (3) seconds. A refused command changes nothing and gets one
  private line saying when to try again (`CoolingDown`). Votes, night choices and survey
  answers are game actions, not commands: they are not limited here.
- `AddressLimiter`: a token bucket per client address, in a bounded table (the oldest
  addresses are forgotten first), for unauthenticated endpoints such as ``/slack/install``.
  `client_key` says whose a request is: the address that connected, or, when that is a
  trusted reverse proxy, the address the proxies saw (the right-most of ``X-Forwarded-For``
  that is not a trusted proxy itself: the part a client cannot write); an IPv6 client is
  counted by its /64 network (one host is given a whole /64 and can pick any address in it).
- `STAGE_INTERVAL`: players' lines on one Discord stage are spaced this far apart. Discord
  lets a webhook post 5 messages in 2 s and then refuses until the window is over: sending
  in bursts makes a line that arrives just after one wait the whole window; spaced posts keep
  every line's wait to one interval per line ahead of it, at the same throughput.
- `FairQueue`: what a stage's delivery worker takes its next post from. The Game-Manager's
  posts (announcements, menus) go first, always; players' lines are taken round-robin, one
  per seat in turn, so a seat with a backlog of a hundred lines delays another seat's line
  by at most one post.
"""

from __future__ import annotations

import ipaddress
import math
import time
from collections import OrderedDict, deque
from collections.abc import Hashable, Iterable, Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar

from bot.errors import ServiceError
from games.errors import RuleError

#: lines a seat may send at once before the sustained rate applies
LINE_BURST = 10
#: lines a second a seat may send, sustained (30 a minute)
LINE_RATE = 0.5
#: seconds between two players' lines posted through one Discord webhook (5 per 2 s allowed)
STAGE_INTERVAL = 0.42
#: changes of a vote one seat may make at once ...
CHANGE_BURST = 4
#: ... then one every this many seconds
CHANGE_EVERY = 5.0
#: at most one "slow down" note per seat in this many seconds
NOTE_EVERY = 30.0
#: seconds between two lobbies opened by one person
LOBBY_COOLDOWN = 30.0
#: commands (slash commands, lobby buttons) one person may use in a row on a server ...
COMMAND_BURST = 5
#: ... then one every this many seconds (20 a minute)
COMMAND_EVERY = 3.0
#: seconds between two consent withdrawals of one person
WITHDRAW_COOLDOWN = 300.0
#: at most one automatic answer in this many seconds to a person who writes to the bot
#: outside any game (each would be a post: a flood of messages must not become one)
STRAY_NOTE_EVERY = 60.0
#: an open lobby nobody joined, left or started for this long closes by itself
LOBBY_IDLE_SECONDS = 3600.0

T = TypeVar("T")


class LineLimited(ServiceError, RuleError):
    """A line over the seat's rate limit: not posted. (A `RuleError` too, so an agent's
    driver treats it as the game's refusal, not as a broken connection.)"""

    def __init__(self, wait: float) -> None:
        super().__init__(
            f"You are writing faster than the game can pass on, so that line was not posted "
            f"(nor will the next ones be, for about {max(1, round(wait))} s). "
            "Slow down a little and write again."
        )
        self.wait = wait


class ChangeLimited(ServiceError, RuleError):
    """A vote changed again too soon: the vote stays as it was (a `RuleError` too, as
    `LineLimited`)."""

    def __init__(self, wait: float) -> None:
        super().__init__(
            "You are changing your vote faster than the game can announce it, so it stays as "
            f"it was. Try again in {max(1, math.ceil(wait))} s."
        )
        self.wait = wait


class CoolingDown(ServiceError):
    """A command used again too soon."""

    def __init__(self, what: str, wait: float) -> None:
        # (rounded up: trying again after the time said always works)
        super().__init__(f"Please wait {max(1, math.ceil(wait))} s before you {what} again.")
        self.wait = wait


@dataclass
class TokenBucket:
    """``burst`` tokens, refilled at ``rate`` a second; a line takes one."""

    burst: float
    rate: float
    tokens: float = -1.0
    at: float = 0.0

    def take(self, now: float) -> float:
        """Take a token at ``now``: 0.0 when there was one, else the seconds until there is.
        A moment before the last one (a line typed earlier, relayed late) counts as the last."""
        if self.tokens < 0:
            self.tokens, self.at = self.burst, now
        if now > self.at:
            self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
            self.at = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return 0.0
        return (1.0 - self.tokens) / self.rate if self.rate > 0 else float("inf")


class LineLimiter:
    """One `TokenBucket` per (game, seat); see the module docstring for the figures."""

    def __init__(
        self, burst: float = LINE_BURST, rate: float = LINE_RATE, note_every: float = NOTE_EVERY
    ) -> None:
        self.burst = burst
        self.rate = rate
        self.note_every = note_every
        self._buckets: dict[tuple[str, int], TokenBucket] = {}
        #: when each seat was last told to slow down
        self._noted: dict[tuple[str, int], float] = {}
        #: lines refused so far (metrics, tests)
        self.refused = 0

    def check(self, game_id: str, seat: int, now: float) -> bool | None:
        """True: the line may go. False: refused, and its writer gets a note. None: refused
        quietly (the seat was told less than `note_every` seconds ago)."""
        key = (game_id, seat)
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = TokenBucket(self.burst, self.rate)
        if bucket.take(now) == 0.0:
            return True
        self.refused += 1
        told = self._noted.get(key)
        if told is not None and 0 <= now - told < self.note_every:
            return None
        self._noted[key] = now
        return False

    def wait(self, game_id: str, seat: int) -> float:
        bucket = self._buckets.get((game_id, seat))
        if bucket is None or bucket.rate <= 0:
            return 0.0
        return max(0.0, (1.0 - bucket.tokens) / bucket.rate)

    def forget(self, game_id: str) -> None:
        for key in [k for k in self._buckets if k[0] == game_id]:
            del self._buckets[key]
            self._noted.pop(key, None)


class ChangeLimiter:
    """One `TokenBucket` per (game, seat) on vote changes; see the module docstring."""

    def __init__(self, burst: float = CHANGE_BURST, every: float = CHANGE_EVERY) -> None:
        self.burst = burst
        self.rate = 1.0 / every if every > 0 else math.inf
        self._buckets: dict[tuple[str, int], TokenBucket] = {}
        #: changes refused so far (metrics, tests)
        self.refused = 0

    def check(self, game_id: str, seat: int, now: float) -> float:
        """0.0: the change may go; else the seconds until one may."""
        if self.burst <= 0:
            return 0.0
        key = (game_id, seat)
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = TokenBucket(self.burst, self.rate)
        wait = bucket.take(now)
        if wait > 0:
            self.refused += 1
        return wait

    def forget(self, game_id: str) -> None:
        for key in [k for k in self._buckets if k[0] == game_id]:
            del self._buckets[key]


class Cooldowns:
    """The last use of each (user, what); `check` refuses a use within ``seconds`` of it."""

    def __init__(self, seconds: float, limit: int = 100_000) -> None:
        self.seconds = seconds
        self.limit = limit
        self._last: OrderedDict[Hashable, float] = OrderedDict()

    def check(self, key: Hashable, now: float, what: str = "do that") -> None:
        """Record a use at ``now``, or raise `CoolingDown` (nothing recorded)."""
        last = self._last.get(key)
        if last is not None and now - last < self.seconds:
            raise CoolingDown(what, self.seconds - (now - last))
        self._last[key] = now
        self._last.move_to_end(key)
        while len(self._last) > self.limit:
            self._last.popitem(last=False)

    def clear(self, key: Hashable) -> None:
        self._last.pop(key, None)


#: commands no limit holds back: a person's consent (reading the notice, withdrawing: the
#: withdrawal has its own cooldown, `bot.protection.withdrawals`) and help, which costs nothing
UNLIMITED_COMMANDS = frozenset({"consent", "help"})


class CommandLimiter:
    """One `TokenBucket` per (platform, server, person) on commands, at most ``size`` people
    remembered (the least recently seen forgotten first). ``burst`` 0: no limit (the tests'
    services; the bot's runtime sets the figures: `bot.runtime`)."""

    def __init__(
        self, burst: float = COMMAND_BURST, every: float = COMMAND_EVERY, size: int = 100_000
    ) -> None:
        self.burst = burst
        self.every = every
        self.size = size
        self._buckets: OrderedDict[tuple[str, str, str], TokenBucket] = OrderedDict()
        #: commands refused so far (metrics, tests)
        self.refused = 0

    def check(
        self,
        platform: str,
        server: str,
        user: str,
        now: float | None = None,
        *,
        command: str = "",
    ) -> None:
        """Count a command of ``user`` at ``now`` (monotonic seconds; default: now), or raise
        `CoolingDown` saying when they may use one again (nothing counted). ``command``: the
        subcommand's name (``"consent"`` for ``/mafia consent withdraw``); those in
        `UNLIMITED_COMMANDS` are neither counted nor refused."""
        if self.burst <= 0 or command.lower() in UNLIMITED_COMMANDS:
            return
        now = time.monotonic() if now is None else now
        key = (platform, server, user)
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = TokenBucket(self.burst, 1.0 / self.every)
        self._buckets.move_to_end(key)
        while len(self._buckets) > self.size:
            self._buckets.popitem(last=False)
        wait = bucket.take(now)
        if wait > 0:
            self.refused += 1
            raise CoolingDown("use a command", wait)


class AddressLimiter:
    """A token bucket per client address, at most ``size`` addresses remembered (the least
    recently seen is forgotten first, which can only let that address start a new burst)."""

    def __init__(self, burst: float, rate: float, size: int = 10_000) -> None:
        self.burst = burst
        self.rate = rate
        self.size = size
        self._buckets: OrderedDict[str, TokenBucket] = OrderedDict()
        self.refused = 0

    def allow(self, address: str, now: float) -> bool:
        bucket = self._buckets.get(address)
        if bucket is None:
            bucket = self._buckets[address] = TokenBucket(self.burst, self.rate)
        self._buckets.move_to_end(address)
        while len(self._buckets) > self.size:
            self._buckets.popitem(last=False)
        if bucket.take(now) == 0.0:
            return True
        self.refused += 1
        return False


Network = ipaddress.IPv4Network | ipaddress.IPv6Network
#: reverse proxies trusted when none are configured: only this machine's own
LOCAL_PROXIES = ("127.0.0.1/8", "::1/128")


def proxy_networks(spec: str | Iterable[str]) -> list[Network]:
    """``"10.0.0.0/8, 192.0.2.7"`` (or a list of them) -> networks; raises ValueError."""
    items = spec.split(",") if isinstance(spec, str) else list(spec)
    return [ipaddress.ip_network(item.strip(), strict=False) for item in items if item.strip()]


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    text = text.strip().strip('"')
    if text.startswith("[") and "]" in text:  # [v6]:port
        text = text[1 : text.index("]")]
    elif text.count(":") == 1:  # v4:port
        text = text.split(":", 1)[0]
    try:
        found = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(found, ipaddress.IPv6Address) and found.ipv4_mapped is not None:
        return found.ipv4_mapped
    return found


def client_key(peer: str | None, forwarded_for: Iterable[str], trusted: Iterable[Network]) -> str:
    """Whose a request is, for `AddressLimiter`: ``peer`` (the address that connected), or,
    when ``peer`` is in a ``trusted`` network (a reverse proxy), the right-most address of the
    ``X-Forwarded-For`` headers (``forwarded_for``) that is not trusted: each proxy appends
    the address it saw, so only what lies left of that can come from the client. IPv6 keys
    are /64 networks. Unparsable: the text itself."""
    nets = list(trusted)

    def is_trusted(addr: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
        return any(addr.version == net.version and addr in net for net in nets)

    def key(addr: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str:
        if addr.version == 6:
            return str(ipaddress.ip_network(f"{addr}/64", strict=False))
        return str(addr)

    addr = _address(peer or "")
    if addr is None:
        return peer or "?"
    if not is_trusted(addr):
        return key(addr)
    hops = [h for header in forwarded_for for h in header.split(",") if h.strip()]
    for hop in reversed(hops):
        seen = _address(hop)
        if seen is None:
            return hop.strip()  # (written by whoever the proxies trusted: counted as it is)
        if not is_trusted(seen):
            return key(seen)
        addr = seen
    return key(addr)  # every hop a proxy of ours (or none): the last one


class FairQueue(Generic[T]):
    """A queue of posts for one place: the Game-Manager's (``lane`` None) before any player's,
    in their order; players' lines round-robin by ``lane`` (the seat), each lane in order.

    Supports what the delivery workers used of a deque: ``append``, ``popleft``, ``len``,
    truth, and a look at what comes next *in the same lane* (for merging neighbours)."""

    def __init__(self) -> None:
        self._first: deque[T] = deque()
        self._lanes: OrderedDict[Hashable, deque[T]] = OrderedDict()
        self._last: Hashable | None = None
        #: lanes taken from at least once since they last emptied (they go round at the back)
        self._served: set[Hashable] = set()
        self._count = 0

    def append(self, item: T, lane: Hashable | None = None) -> None:
        if lane is None:
            self._first.append(item)
        else:
            q = self._lanes.get(lane)
            if q is None:
                # a seat with nothing queued joins the round ahead of the seats that have
                # been served and still have a backlog: its line waits for no backlog at all
                q = self._lanes[lane] = deque()
                for other in [k for k in self._lanes if k in self._served]:
                    self._lanes.move_to_end(other)
            q.append(item)
        self._count += 1

    def popleft(self) -> T:
        if self._first:
            self._last = None
            self._count -= 1
            return self._first.popleft()
        if not self._lanes:
            raise IndexError("pop from an empty FairQueue")
        lane, q = next(iter(self._lanes.items()))
        item = q.popleft()
        # this lane goes to the back of the round; an emptied lane leaves it
        del self._lanes[lane]
        if q:
            self._lanes[lane] = q
            self._served.add(lane)
        else:
            self._served.discard(lane)
        self._last = lane
        self._count -= 1
        return item

    def peek(self) -> T:
        """What `popleft` would take now."""
        if self._first:
            return self._first[0]
        for q in self._lanes.values():
            return q[0]
        raise IndexError("peek at an empty FairQueue")

    def peek_same(self) -> T | None:
        """What comes next in the lane the last `popleft` took from, if it would come next
        anyway for that lane (the Game-Manager's lane only while nothing else preempts)."""
        if self._last is None:
            return self._first[0] if self._first else None
        q = self._lanes.get(self._last)
        return q[0] if q else None

    def pop_same(self) -> T:
        if self._last is None:
            item = self._first.popleft()
        else:
            q = self._lanes[self._last]
            item = q.popleft()
            if not q:
                del self._lanes[self._last]
                self._served.discard(self._last)
        self._count -= 1
        return item

    def __len__(self) -> int:
        return self._count

    def __bool__(self) -> bool:
        return self._count > 0

    def __iter__(self) -> Iterator[T]:
        yield from self._first
        for q in self._lanes.values():
            yield from q
