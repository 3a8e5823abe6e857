"""An upstream's check of the approval receipt the gate attached to a call, with PyJWT.

python3 check_receipt.py JWKS_URL ISSUER UPSTREAM TOOL ARGUMENTS_JSON RECEIPT...
prints one JSON line per receipt: {"ok": true, "txn": ...} or {"ok": false, "error": ...}.
"""
import hashlib
import json
import sys

import jwt

RECEIPT_TYPE = "approval-receipt+jwt"


def arguments_sha256(arguments):
    # RFC 8785 for strings, integers, booleans and null (a float or a key
    # outside the BMP may print otherwise: the digest then differs, and
    # the call is refused, never let through).
    text = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def check_receipt(receipt, keys, issuer, upstream, tool, arguments):
    """The receipt's claims if it approves exactly this call, else raises."""
    # typ tells a receipt from the deployment's other tokens (OAuth access
    # tokens are signed by the same keys): PyJWT does not check it itself.
    typ = jwt.get_unverified_header(receipt).get("typ")
    if typ != RECEIPT_TYPE:
        raise ValueError(f"not a receipt: typ {typ!r}")
    key = keys.get_signing_key_from_jwt(receipt).key
    claims = jwt.decode(receipt, key, algorithms=["ES256"], issuer=issuer, leeway=60,
                        options={"require": ["iss", "iat", "exp", "txn"]})
    if claims.get("outcome") != "approved":
        raise ValueError(f"not an approval: {claims.get('outcome')!r}")
    detail = next((d for d in claims.get("authorization_details", []) if d.get("type") == "elicitation"), {})
    if detail.get("tool") != tool:
        raise ValueError(f"for another tool: {detail.get('tool')!r}")
    if detail.get("arguments_sha256") != arguments_sha256(arguments):
        raise ValueError("for another call's arguments")
    if upstream not in detail.get("locations", []):
        raise ValueError(f"for another upstream server: {detail.get('locations')!r}")
    return claims


def main():
    jwks_url, issuer, upstream, tool, arguments, *receipts = sys.argv[1:]
    keys = jwt.PyJWKClient(jwks_url)
    for receipt in receipts:
        try:
            claims = check_receipt(receipt, keys, issuer, upstream, tool, json.loads(arguments))
            print(json.dumps({"ok": True, "txn": claims["txn"]}))
        except Exception as e:  # each refusal, with its reason
            print(json.dumps({"ok": False, "error": f"{type(e).__name__}: {e}"}))


if __name__ == "__main__":
    main()
