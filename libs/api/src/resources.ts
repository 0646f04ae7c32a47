// The API resources Quarry defines or speaks, as plain data the runtime's
// REST client takes (libs/kube's ResourceType is structural, so the generic
// runtime needs no knowledge of these kinds).
import { RESOLUTION_GROUP, RESOLUTION_REQUEST_KIND, RESOLUTION_REQUEST_PLURAL } from "./types.ts";

export const resolutionRequests = {
  group: RESOLUTION_GROUP,
  version: "v1beta1",
  plural: RESOLUTION_REQUEST_PLURAL,
  kind: RESOLUTION_REQUEST_KIND,
  namespaced: true,
} as const;
