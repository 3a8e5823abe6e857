"""Verifies approval receipts with PyJWT, as a third party would, typ checked explicitly:
python3 receipt.py JWKS_URL ISSUER TOKEN... prints one JSON line per token,
{"ok": true, "kid": ..., "txn": ..., "outcome": ...} or {"ok": false, "error": ...}.
"""
import json
import sys

import jwt

jwks_url, issuer, *tokens = sys.argv[1:]
keys = jwt.PyJWKClient(jwks_url)
for token in tokens:
    try:
        header = jwt.get_unverified_header(token)
        if header.get("typ") != "approval-receipt+jwt":
            raise ValueError(f"not a receipt: typ {header.get('typ')!r}")
        payload = jwt.decode(token, keys.get_signing_key_from_jwt(token).key, algorithms=["ES256"],
                             issuer=issuer, leeway=60, options={"require": ["iss", "iat", "exp", "txn"]})
        print(json.dumps({"ok": True, "kid": header["kid"], "txn": payload["txn"], "outcome": payload["outcome"]},
                         separators=(",", ":")))
    except Exception as e:
        print(json.dumps({"ok": False, "error": f"{type(e).__name__}: {e}"}, separators=(",", ":")))
