"""Mafia on Slack: the stage is a channel, each player's booth their DM with the app, and the
mafia's den is relayed into the mafia humans' booths. Entry point: `bot.slack.app.run_slack`."""
