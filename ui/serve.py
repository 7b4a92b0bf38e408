"""``python -m ui.serve``, the workshop command the README gives: the app as N processes behind
HAProxy.  The supervisor is ``ui.serving.serve``."""

from ui.serving.serve import main

if __name__ == "__main__":
    main()
