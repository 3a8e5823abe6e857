// An upstream's check of the approval receipt the gate attached to a call,
// with the npm jose library.
//
// node check-receipt.mts JWKS_URL ISSUER UPSTREAM TOOL ARGUMENTS_JSON RECEIPT...
// prints one JSON line per receipt: {"ok": true, "txn": ...} or {"ok": false, "error": ...}.
import { createHash } from "node:crypto";
import { createRemoteJWKSet, jwtVerify, type JWTPayload } from "jose";

type Detail = { type: string; tool?: string; arguments_sha256?: string; locations?: string[] };
type Receipt = JWTPayload & { txn: string; outcome: string; authorization_details: Detail[] };

// RFC 8785: keys sorted by UTF-16 code units, numbers and strings as
// ECMAScript prints them, no white space.
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (v !== null && typeof v === "object") {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o).sort().map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`).join(",")}}`;
  }
  return JSON.stringify(v);
}

export async function checkReceipt(
  receipt: string, keys: ReturnType<typeof createRemoteJWKSet>,
  issuer: string, upstream: string, tool: string, args: unknown,
): Promise<Receipt> {
  // typ tells a receipt from the deployment's other tokens (OAuth access
  // tokens are signed by the same keys).
  const { payload } = await jwtVerify<Receipt>(receipt, keys, {
    issuer, algorithms: ["ES256"], typ: "approval-receipt+jwt", clockTolerance: 60,
    requiredClaims: ["iat", "exp", "txn"],
  });
  if (payload.outcome !== "approved") throw new Error(`not an approval: ${payload.outcome}`);
  const detail = (payload.authorization_details ?? []).find((d) => d.type === "elicitation");
  if (detail?.tool !== tool) throw new Error(`for another tool: ${detail?.tool}`);
  const digest = createHash("sha256").update(canonical(args)).digest("hex");
  if (detail.arguments_sha256 !== digest) throw new Error("for another call's arguments");
  if (!detail.locations?.includes(upstream)) throw new Error(`for another upstream server: ${detail.locations}`);
  return payload;
}

const [jwksURL, issuer, upstream, tool, args, ...receipts] = process.argv.slice(2);
const keys = createRemoteJWKSet(new URL(jwksURL));
for (const receipt of receipts) {
  try {
    const claims = await checkReceipt(receipt, keys, issuer, upstream, tool, JSON.parse(args));
    console.log(JSON.stringify({ ok: true, txn: claims.txn }));
  } catch (e) {
    console.log(JSON.stringify({ ok: false, error: `${(e as Error & { code?: string }).code ?? (e as Error).name}: ${(e as Error).message}` }));
  }
}
