"""One fake Slack workspace: its team, the app's bot user and tokens, people and channels.

The Web API handlers and the inbound builders both read and write this; tests reach it through
`FakeSlack` (`fake.workspace`) when the driving API does not already say what they need.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

from tests.fakes.slack.model import (
    APP_TOKEN_SCOPES,
    DEFAULT_BOT_SCOPES,
    Ephemeral,
    FakeChannel,
    FakeUser,
    FakeView,
    Ids,
    Message,
    TsClock,
)

UserRef = str | FakeUser
ChannelRef = str | FakeChannel

# Slack expires a trigger_id after 3 s and accepts it once.
TRIGGER_TTL_S = 3.0


@dataclass
class TokenInfo:
    kind: str  # "bot" | "app"
    scopes: set[str]
    user_id: str | None = None


@dataclass
class Trigger:
    id: str
    user: str
    issued_at: float = field(default_factory=time.monotonic)
    used: bool = False


class Workspace:
    def __init__(
        self,
        *,
        team_domain: str = "fakemafia",
        bot_name: str = "mafiabot",
        scopes: Iterable[str] = DEFAULT_BOT_SCOPES,
        trigger_ttl: float | None = TRIGGER_TTL_S,
        id_offset: int = 0,
        enterprise: bool = False,
    ) -> None:
        self.ids = Ids(id_offset)
        self.clock = TsClock()
        self.team_id = self.ids.new("T")
        #: the Enterprise Grid organisation this workspace belongs to (None: a lone workspace)
        self.enterprise_id: str | None = self.ids.new("E") if enterprise else None
        self.team_domain = team_domain
        self.app_id = self.ids.new("A")
        self.bot_id = self.ids.new("B")
        self.trigger_ttl = trigger_ttl
        self.bot = FakeUser(
            id=self.ids.new("U"),
            name=bot_name,
            team_id=self.team_id,
            real_name=bot_name,
            is_bot=True,
            bot_id=self.bot_id,
        )
        self.users: dict[str, FakeUser] = {self.bot.id: self.bot}
        self.channels: dict[str, FakeChannel] = {}
        self.deleted_channels: dict[str, FakeChannel] = {}
        self.ephemerals: list[Ephemeral] = []
        self.views: dict[str, FakeView] = {}
        self.home_views: dict[str, FakeView] = {}
        self.triggers: dict[str, Trigger] = {}
        self.socket_tickets: set[str] = set()
        # Without chat:write.customize, reject username/icon (True) or drop them silently.
        self.strict_customize = True
        self.bot_token = f"xoxb-{secrets.token_hex(6)}-fake-bot"
        self.app_token = f"xapp-1-{self.app_id}-{secrets.token_hex(6)}"
        self.tokens: dict[str, TokenInfo] = {
            self.bot_token: TokenInfo("bot", set(scopes), self.bot.id),
            self.app_token: TokenInfo("app", set(APP_TOKEN_SCOPES)),
        }
        self.general = self.add_channel("general", members=(), bot_member=False)
        self.general.is_general = True

    @property
    def enterprise(self) -> dict[str, str] | None:
        """The organisation as Slack's payloads carry it (None outside Enterprise Grid)."""
        if self.enterprise_id is None:
            return None
        return {"id": self.enterprise_id, "name": f"{self.team_domain.title()} Org"}

    # -- people and conversations ----------------------------------------------------------

    def add_user(
        self,
        name: str,
        *,
        id: str | None = None,
        real_name: str = "",
        display_name: str = "",
        is_bot: bool = False,
        is_admin: bool = False,
    ) -> FakeUser:
        user = FakeUser(
            id=id or self.ids.new("U"),
            name=name,
            team_id=self.team_id,
            real_name=real_name or name.title(),
            display_name=display_name or name,
            is_bot=is_bot,
            is_admin=is_admin,
        )
        if user.id in self.users:
            raise ValueError(f"user id {user.id} already exists")
        self.users[user.id] = user
        if not is_bot:
            self.general.members.append(user.id)
        return user

    def add_channel(
        self,
        name: str,
        *,
        id: str | None = None,
        private: bool = False,
        members: Iterable[UserRef] = (),
        bot_member: bool = True,
        creator: UserRef | None = None,
    ) -> FakeChannel:
        if any(c.name == name and not c.is_im for c in self.channels.values()):
            raise ValueError(f"channel name {name!r} is taken")
        channel = FakeChannel(
            id=id or self.ids.new("C"),
            name=name,
            is_private=private,
            creator=self.user_id(creator) if creator is not None else None,
        )
        channel.members = [self.user_id(m) for m in members]
        if bot_member and self.bot.id not in channel.members:
            channel.members.append(self.bot.id)
        self.channels[channel.id] = channel
        return channel

    def dm(self, user: UserRef) -> FakeChannel:
        """The bot's direct-message conversation with `user`, opened on first use."""
        uid = self.user_id(user)
        if uid not in self.users:
            raise LookupError(f"no user {uid}")
        for channel in self.channels.values():
            if channel.is_im and channel.im_user == uid:
                return channel
        channel = FakeChannel(
            id=self.ids.new("D"), name=uid, is_im=True, im_user=uid, members=[uid, self.bot.id]
        )
        self.channels[channel.id] = channel
        return channel

    def existing_dm(self, user_id: str) -> FakeChannel | None:
        for channel in self.channels.values():
            if channel.is_im and channel.im_user == user_id:
                return channel
        return None

    def user_id(self, user: UserRef) -> str:
        return user.id if isinstance(user, FakeUser) else user

    def channel_id(self, channel: ChannelRef) -> str:
        return channel.id if isinstance(channel, FakeChannel) else channel

    def user(self, user: UserRef) -> FakeUser:
        uid = self.user_id(user)
        if uid not in self.users:
            raise LookupError(f"no user {uid} in the fake workspace")
        return self.users[uid]

    def channel(self, channel: ChannelRef) -> FakeChannel:
        cid = self.channel_id(channel)
        if cid in self.channels:
            return self.channels[cid]
        for candidate in self.channels.values():
            if not candidate.is_im and candidate.name == cid.lstrip("#"):
                return candidate
        raise LookupError(f"no channel {cid} in the fake workspace")

    def archive(self, channel: ChannelRef) -> FakeChannel:
        found = self.channel(channel)
        found.is_archived = True
        return found

    def delete_channel(self, channel: ChannelRef) -> FakeChannel:
        found = self.channel(channel)
        del self.channels[found.id]
        self.deleted_channels[found.id] = found
        return found

    # -- messages --------------------------------------------------------------------------

    def post(self, channel: FakeChannel, **fields: object) -> Message:
        message = Message(ts=self.clock.next(), channel=channel.id, team=self.team_id, **fields)  # type: ignore[arg-type]
        if message.thread_ts:
            parent = channel.find(message.thread_ts)
            if parent is not None:
                parent.reply_count += 1
                if parent.thread_ts is None:
                    parent.thread_ts = parent.ts
        channel.messages.append(message)
        return message

    def find_message(self, ts: str) -> Message | None:
        for channel in self.channels.values():
            found = channel.find(ts)
            if found is not None:
                return found
        return None

    # -- triggers --------------------------------------------------------------------------

    def issue_trigger(self, user: str) -> str:
        trigger_id = f"{secrets.randbelow(10**11)}.{self.team_id[1:]}.{secrets.token_hex(16)}"
        self.triggers[trigger_id] = Trigger(trigger_id, user)
        return trigger_id

    def bot_scopes(self) -> set[str]:
        return self.tokens[self.bot_token].scopes
