export { type Challenge, parseChallenges } from "./challenge.ts";
export {
  type BlobOptions,
  type CallOptions,
  type FetchedManifest,
  isLoopback,
  type OciRegistry,
  RegistryClient,
  type RegistryClientOptions,
  type RepositoryRef,
  type WithheldCredential,
} from "./client.ts";
export { type BasicCredential, DockerConfigError, DockerCredentials } from "./docker-config.ts";
export { parseRetryAfter, RegistryError, type RegistryErrorCode } from "./errors.ts";
export {
  type Descriptor,
  type ImageIndex,
  type ImageManifest,
  MANIFEST_ACCEPT,
  type Manifest,
  ManifestError,
  MediaType,
  type Platform,
  parseManifest,
} from "./manifest.ts";
export {
  type RealmBinding,
  type RealmBindingInput,
  realmBinding,
  type TokenRealmPair,
} from "./realm-binding.ts";
export {
  apiHost,
  DOCKER_HUB,
  formatReference,
  type ImageReference,
  InvalidReferenceError,
  isDigest,
  manifestReference,
  parseReference,
  repositoryName,
} from "./reference.ts";
