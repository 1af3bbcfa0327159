"""What the test suite shares: the recorded exchanges, client fixtures, and per-family helpers."""
