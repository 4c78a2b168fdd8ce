"""What the app needs from Slack, and Slack's errors in words a game host can act on.

`REQUIRED_SCOPES` is the list slack_manifest.yaml must grant (a test keeps them in step); each
scope says what breaks without it, so "missing_scope" becomes a sentence, not a code.
"""

from __future__ import annotations

from collections.abc import Iterable

#: bot scope -> what it is for (shown to the host when it is missing)
REQUIRED_SCOPES: dict[str, str] = {
    "commands": "the /mafia command",
    "chat:write": "posting the game, the lobby and your direct messages",
    "chat:write.customize": "posting each line under its character's name and picture",
    "im:write": "opening each player's direct-message booth",
    "im:history": "reading what players type in their booth",
    "channels:history": "noticing messages typed straight into a public game channel",
    "groups:history": "noticing messages typed straight into a private game channel",
    "channels:read": "noticing when a public game channel is archived or deleted",
    "groups:read": "noticing when a private game channel is archived or deleted",
    "users:read": "checking who is a workspace admin (export, ending others' games)",
    "files:write": "sending research exports as a file",
}

#: events the app subscribes to (manifest: settings.event_subscriptions.bot_events)
BOT_EVENTS: tuple[str, ...] = (
    "message.im",
    "message.channels",
    "message.groups",
    "channel_archive",
    "channel_deleted",
    "group_archive",
    "group_deleted",
    # the app removed from a workspace, or its bot token revoked: that workspace's games end
    "app_uninstalled",
    "tokens_revoked",
)

#: Slack errors that mean the conversation is gone for us (report, don't retry)
GONE = {"channel_not_found", "is_archived", "not_in_channel", "channel_is_archived"}
#: Slack errors that mean "Slack is having trouble"; the call was retried for a while first
TRANSIENT = {"internal_error", "fatal_error", "service_unavailable", "request_timeout"}
AUTH = {"invalid_auth", "account_inactive", "token_revoked", "not_authed", "no_permission"}
#: Slack refused the token itself: another process may have refreshed it, or the workspace
#: removed the app; the installation is read again before giving up
STALE_TOKEN = {"token_expired", "token_revoked", "invalid_auth", "account_inactive"}


def missing_scopes(granted: Iterable[str]) -> list[str]:
    have = set(granted)
    return [s for s in REQUIRED_SCOPES if s not in have]


def scope_words(scopes: Iterable[str]) -> str:
    return "; ".join(
        f"`{s}` ({REQUIRED_SCOPES.get(s, 'needed by Slack for this')})" for s in scopes
    )


def explain(error: str, *, what: str, channel: str | None = None, needed: str = "") -> str:
    """One plain sentence or two for the host: what failed, why, and what to do."""
    where = f"<#{channel}> ({channel})" if channel else "that conversation"
    if error == "missing_scope":
        scopes = [s for s in needed.split(",") if s] or ["(Slack did not say which)"]
        return (
            f"I couldn't {what}: the Slack app is missing the permission {scope_words(scopes)}. "
            "A workspace admin can add it under OAuth & Permissions (slack_manifest.yaml in "
            "the mafiabot repository lists everything the app needs) and reinstall the app."
        )
    if error == "channel_not_found":
        return (
            f"I couldn't {what}: {where} no longer exists or I can no longer see it "
            "(it was deleted, or I was removed from a private channel)."
        )
    if error in ("is_archived", "channel_is_archived"):
        return f"I couldn't {what}: {where} has been archived."
    if error == "not_in_channel":
        return (
            f"I couldn't {what}: I'm not a member of {where} any more. "
            "Invite me back with /invite and the app's name."
        )
    if error in AUTH:
        return (
            f"I couldn't {what}: Slack refused the app's token ({error}). The app may have been "
            "uninstalled or its token revoked; reinstall it and restart mafiabot."
        )
    if error.startswith("http_5") or error in TRANSIENT:
        return (
            f"I couldn't {what}: Slack kept failing ({error.replace('http_', 'HTTP ')}) for "
            "too long, so I gave up on it. Slack's status page (status.slack.com) says when "
            "it is back."
        )
    if error == "ratelimited":
        return f"I couldn't {what}: Slack kept rate-limiting me for too long."
    return f"I couldn't {what}: Slack answered '{error}'."
