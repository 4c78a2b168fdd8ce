"""What players see of their games, once over: the post-game survey (`survey`), the reveal
(`reveal`) and each seat's story (`seat_story`), stats and the board (`stats`), the
spot-the-AI rate (`spotrate`), a person's history (`history`), the replay page
(`replay_page`) and the optional pages on the web (`web_pages`)."""
