"""Mafia on Slack: the stage is a channel, each player's booth their DM with the app, the den a
private channel of the mafia. Entry point: `bot.slack.app.run_slack`."""
