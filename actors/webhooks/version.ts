/** The version of the event envelope (`api_version`), also named in the webhook client's User-Agent. */
export const API_VERSION = '2026-07-01';
