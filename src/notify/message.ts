/**
 * The one shape every outgoing notice takes (budget alerts, anomaly alerts, scheduled report
 * deliveries), whatever the channel. Producers enqueue it with `enqueueMessage` (outbox.ts); the
 * dispatcher delivers it to each named channel, once, with retries.
 */
export interface OutgoingMessage {
  /**
   * Unique per logical notice, e.g. `budget:<name>:<YYYY-MM>:actual:80`. Enqueueing a key that
   * is already in the outbox does nothing: this is what makes an alert go out once across replicas
   * and restarts.
   */
  key: string;
  /** Channel names from the configuration's `channels`. */
  channels: readonly string[];
  /** Mail subject; first line of a webhook's `text`. */
  subject: string;
  /** Plain text body (mail body; Slack-compatible `text` of a webhook). */
  text: string;
  /** Structured content of the notice, sent as `data` in a webhook's JSON body. */
  data: Record<string, unknown>;
  /** Absolute link to the report behind the notice (from CLOUDTALLY_PUBLIC_URL), if known. */
  link?: string;
  /** A file to attach to mail (webhooks get the link and the summary instead). */
  attachment?: { filename: string; contentType: string; content: string };
  /**
   * A file describing the attachment (a dataset's metadata), attached beside it in mail; webhooks
   * carry it in `data` instead.
   */
  sidecar?: { filename: string; contentType: string; content: string };
}
