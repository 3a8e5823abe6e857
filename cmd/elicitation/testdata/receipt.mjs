// Verifies approval receipts with the npm jose library, as a third party
// would: node receipt.mjs JWKS_URL ISSUER TOKEN... prints one JSON line per
// token, {"ok": true, "txn": ..., "outcome": ...} or {"ok": false, "code": ...}.
import { createRemoteJWKSet, jwtVerify } from "jose";

const [jwksURL, issuer, ...tokens] = process.argv.slice(2);
const keys = createRemoteJWKSet(new URL(jwksURL));
for (const token of tokens) {
  try {
    const { payload, protectedHeader } = await jwtVerify(token, keys, {
      issuer,
      algorithms: ["ES256"],
      typ: "approval-receipt+jwt",
    });
    console.log(JSON.stringify({ ok: true, kid: protectedHeader.kid, txn: payload.txn, outcome: payload.outcome }));
  } catch (e) {
    console.log(JSON.stringify({ ok: false, code: e.code ?? String(e) }));
  }
}
