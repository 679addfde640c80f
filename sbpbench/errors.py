"""The one exception type for user mistakes.

A :class:`UserError` carries a single line naming the file, key or line at fault and
what was expected. The command line prints it and exits with code 2 (no traceback
unless ``--debug``).
"""


class UserError(Exception):
    """A mistake in the user's input: bad config, unknown name, unreadable or malformed file."""

    exit_code = 2
