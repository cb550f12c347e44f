/** Who is calling the deployment API: one application, identified by its project API key. */
export interface ApiPrincipal {
  applicationId: string;
  apiKeyId: string;
}
