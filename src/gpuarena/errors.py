"""Errors a user can cause.  The CLI turns each into one line and exit code 2."""


class UserError(Exception):
    """Bad input: an unknown name, a malformed file, an out-of-range value.

    Raised before anything is written, so a refused command changes nothing.
    """
