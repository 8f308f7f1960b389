/**
 * Who is calling a public route: one company and the scopes of one credential.
 */
export interface Principal {
  companyId: number;
  companyName: string;
  /** IANA time zone of the company. */
  timezone: string;
  /** Stable id of the credential, unique across kinds: `key:<id>` or `token:<company>:<sub>`. */
  credentialId: string;
  kind: "api_key" | "access_token";
  scopes: ReadonlySet<string>;
  /** Requests per period for this credential; null = the default from settings. */
  rateLimit: { requests: number; periodSeconds: number } | null;
  /**
   * When the credential stops being accepted (ms since the epoch): an access token's `exp`
   * plus the verification leeway. Absent for API keys (they last until revoked). An event
   * stream opened with the credential closes then.
   */
  expiresAt?: number;
}
