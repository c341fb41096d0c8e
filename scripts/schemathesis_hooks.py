"""Schemathesis hooks for Embers (loaded by scripts/schemathesis.sh through SCHEMATHESIS_HOOKS).

`specific_4xx_message`: every 4xx answer is the service's envelope, its OPT_STATUS says which
kind of failure it is (INVALID_POST_DATA for a 400, FAIL otherwise), and its DESCRIPTION is a
specific message (what is wrong and how to fix it), never empty or a generic phrase.
"""

import schemathesis

# Phrases that say nothing a user can act on.
GENERIC = {
    "bad request",
    "invalid request",
    "invalid input",
    "error",
    "not found",
    "forbidden",
    "unauthorized",
    "method not allowed",
    "payload too large",
    "request failed",
}
# A message naming a member, a value or a rule is longer than this.
MIN_LENGTH = 20


@schemathesis.check
def specific_4xx_message(ctx, response, case):
    status = response.status_code
    if not 400 <= status < 500:
        return None
    try:
        body = response.json()
    except Exception as e:  # the body is not JSON at all
        raise AssertionError(f"{status} is not the JSON envelope ({e}): {response.text[:200]!r}")
    if not isinstance(body, dict):
        raise AssertionError(f"{status} is not the JSON envelope: {response.text[:200]!r}")
    expected = "INVALID_POST_DATA" if status == 400 else "FAIL"
    if body.get("OPT_STATUS") != expected:
        raise AssertionError(f"{status} has OPT_STATUS {body.get('OPT_STATUS')!r}, not {expected!r}")
    description = body.get("DESCRIPTION")
    if not isinstance(description, str) or len(description.strip()) < MIN_LENGTH:
        raise AssertionError(f"{status} has no specific DESCRIPTION: {description!r}")
    if description.strip().lower().rstrip(".") in GENERIC:
        raise AssertionError(f"{status} has a generic DESCRIPTION: {description!r}")
    return None
