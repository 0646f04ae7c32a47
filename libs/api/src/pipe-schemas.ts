// OpenAPI v3 schemas of Quarry's pipe kinds, structural and cheap enough for
// the apiserver's CEL cost estimator (every list and string a rule walks is
// bounded).
//
// A strategy's pod spec is a core/v1 PodSpec, preserved as written: only the
// parts KEP-17's rules look at are typed (initContainers, containers, volumes,
// restartPolicy, and in them names, images and volume mounts), and the kubelet's
// own validation checks the rest when the pipe resolver creates the pod.
//
// What cannot be checked here: that a Pipe's files lie under its strategy's
// emptyDir mount. A CRD rule sees one object, and a ValidatingAdmissionPolicy
// cannot look up the strategy a Pipe names; the pipe resolver checks it
// (InvalidPipe).
import {
  ALLOWED_NAMESPACE_PATTERN,
  MAX_ALLOWED_NAMESPACES,
  MAX_DATA_KEY_LENGTH,
  MAX_NAMESPACE_LENGTH,
  MAX_PIPE_ENTRIES,
  MAX_PIPE_KEY_LENGTH,
  MAX_PIPE_PATH_LENGTH,
  MAX_POD_CONTAINERS,
  MAX_POD_NAME_FIELD_LENGTH,
  MAX_POD_VOLUMES,
  MAX_VOLUME_MOUNTS,
  PIPE_FILE_NAME_PATTERN,
  PIPE_KEY_PATTERN,
  PIPE_OUTPUT_KINDS,
  PIPE_PARAM_NAME_PATTERN,
  PIPE_RESTART_POLICIES,
  PIPE_STRATEGY_KINDS,
  RESERVED_PIPE_PARAM_NAMES,
} from "./pipes.ts";
import type { JSONSchemaProps, ValidationRule } from "./schema-types.ts";
import { crdRootSchema, MAX_PARAM_NAME_LENGTH, MAX_PARAMS, paramListSchema } from "./schemas.ts";

const boundedName = (description: string): JSONSchemaProps => ({
  type: "string",
  minLength: 1,
  maxLength: MAX_POD_NAME_FIELD_LENGTH,
  description,
});

const preservedObject = (description: string): JSONSchemaProps => ({
  type: "object",
  description,
  "x-kubernetes-preserve-unknown-fields": true,
});

function containerSchema(description: string): JSONSchemaProps {
  return {
    type: "object",
    description,
    "x-kubernetes-preserve-unknown-fields": true,
    properties: {
      name: boundedName("The container's name."),
      image: { type: "string", maxLength: 4096, description: "The container's image." },
      volumeMounts: {
        type: "array",
        description: "The container's volume mounts.",
        maxItems: MAX_VOLUME_MOUNTS,
        "x-kubernetes-list-type": "atomic",
        items: {
          type: "object",
          "x-kubernetes-preserve-unknown-fields": true,
          properties: {
            name: boundedName("The mounted volume's name."),
            mountPath: {
              type: "string",
              maxLength: MAX_PIPE_PATH_LENGTH,
              description: "Where it is mounted.",
            },
          },
        },
      },
    },
  };
}

const INIT = "self.initContainers";
const ONE_INIT = `has(${INIT}) && size(${INIT}) == 1`;
const EMPTY_DIRS = "self.volumes.filter(v, has(v.emptyDir))";
const ONE_EMPTY_DIR = `has(self.volumes) && size(${EMPTY_DIRS}) == 1`;

// No messageExpression (e.g. "found 2"): the apiserver's cost estimator prices a string built from
// a list's size far above its budget.
/** KEP-17's pod rules, on the pod spec node. */
export function pipePodRules(): ValidationRule[] {
  const initMessage = "a pipe pod needs exactly one init container: the one that writes the piped files";
  const containersMessage =
    "a pipe pod has no containers of its own (Quarry adds the one that waits while the files are copied)";
  const emptyDirMessage =
    "a pipe pod needs exactly one emptyDir volume: where the init container writes the piped files";
  return [
    {
      rule: ONE_INIT,
      message: initMessage,
      fieldPath: ".initContainers",
    },
    {
      rule: "!has(self.containers) || size(self.containers) == 0",
      message: containersMessage,
      fieldPath: ".containers",
    },
    {
      rule: ONE_EMPTY_DIR,
      message: emptyDirMessage,
      fieldPath: ".volumes",
    },
    {
      // only when the two rules above hold, so a bad pod gets one message per problem
      rule:
        `!(${ONE_INIT}) || !(${ONE_EMPTY_DIR}) || ` +
        `(has(${INIT}[0].volumeMounts) && self.volumes.exists(v, has(v.emptyDir) && ` +
        `${INIT}[0].volumeMounts.exists_one(m, m.name == v.name)))`,
      message: "the init container must mount the emptyDir volume, once",
      fieldPath: ".initContainers",
    },
  ];
}

export function pipePodSchema(): JSONSchemaProps {
  return {
    type: "object",
    description:
      "The pipe pod's spec (a core/v1 PodSpec). One init container writes the files into the one emptyDir volume " +
      "it mounts; no containers (Quarry adds the one that waits while the files are copied out); restartPolicy " +
      "OnFailure or unset. Fields not checked here are passed to the pod unchanged.",
    "x-kubernetes-preserve-unknown-fields": true,
    properties: {
      initContainers: {
        type: "array",
        description: "Exactly one: writes the piped files into the emptyDir it mounts.",
        maxItems: MAX_POD_CONTAINERS,
        "x-kubernetes-list-type": "atomic",
        items: containerSchema("The init container."),
      },
      containers: {
        type: "array",
        description: "Must be empty: Quarry adds the container that waits while the files are copied.",
        maxItems: MAX_POD_CONTAINERS,
        "x-kubernetes-list-type": "atomic",
        items: containerSchema("A container (not allowed)."),
      },
      volumes: {
        type: "array",
        description:
          "Exactly one emptyDir volume (the init container mounts it); other volumes may be inputs.",
        maxItems: MAX_POD_VOLUMES,
        "x-kubernetes-list-type": "atomic",
        items: {
          type: "object",
          "x-kubernetes-preserve-unknown-fields": true,
          properties: {
            name: boundedName("The volume's name."),
            emptyDir: preservedObject("An emptyDir volume source."),
          },
        },
      },
      restartPolicy: {
        type: "string",
        description: "OnFailure, or unset (OnFailure is used): the init container may run more than once.",
        enum: PIPE_RESTART_POLICIES,
      },
    },
    "x-kubernetes-validations": pipePodRules(),
  };
}

/** Tekton's ParamSpec as a strategy declares it: unique names, none of the resolver's own param names. */
export function paramSpecListSchema(description: string): JSONSchemaProps {
  const reserved = RESERVED_PIPE_PARAM_NAMES.map((n) => `'${n}'`).join(", ");
  return {
    type: "array",
    description,
    maxItems: MAX_PARAMS,
    "x-kubernetes-list-type": "atomic",
    items: {
      type: "object",
      required: ["name"],
      properties: {
        name: {
          type: "string",
          minLength: 1,
          maxLength: MAX_PARAM_NAME_LENGTH,
          pattern: PIPE_PARAM_NAME_PATTERN,
          description: "Referenced as $(params.<name>).",
        },
        type: {
          type: "string",
          enum: ["string", "array", "object"],
          description: "When unset: the default's type, else object if properties are given, else string.",
        },
        description: { type: "string", maxLength: 4096 },
        default: {
          description: "A string, an array of strings, or an object of strings, matching type.",
          "x-kubernetes-preserve-unknown-fields": true,
        },
        properties: {
          type: "object",
          description: "Keys an object param must have.",
          additionalProperties: {
            type: "object",
            properties: { type: { type: "string", enum: ["string"] } },
          },
        },
      },
    },
    "x-kubernetes-validations": [
      { rule: "self.all(p, self.exists_one(q, q.name == p.name))", message: "param names must be unique" },
      {
        rule: `self.all(p, !(p.name in [${reserved}]))`,
        message: `params may not be named ${RESERVED_PIPE_PARAM_NAMES.join(", ")}: those are the pipe resolver's own request params`,
      },
    ],
  };
}

/** spec.outputs: the kind each file's output must have (a path once: a list-map keyed by path). */
export function strategyOutputsSchema(): JSONSchemaProps {
  return {
    type: "array",
    description:
      "The kind each piped file's output must have. A file is stored as a ConfigMap only where it is listed " +
      "here with kind ConfigMap; any other file (listed Secret, or not listed) only as a Secret, whatever a Pipe or request asks.",
    maxItems: MAX_PIPE_ENTRIES,
    "x-kubernetes-list-type": "map",
    "x-kubernetes-list-map-keys": ["path"],
    items: {
      type: "object",
      required: ["path", "kind"],
      properties: {
        path: pipePathSchema("The file's absolute path, as a Pipe entry's file or envFile names it."),
        kind: {
          type: "string",
          enum: PIPE_OUTPUT_KINDS,
          description:
            "ConfigMap: the file may be stored as a ConfigMap (or a Secret). Secret: only as a Secret.",
        },
      },
    },
  };
}

/** spec.allowedNamespaces of a ClusterPipeStrategy: names or `*` globs, each once. */
export function allowedNamespacesSchema(): JSONSchemaProps {
  return {
    type: "array",
    description:
      "Namespaces whose Pipes and requests may use this strategy: names, or globs where * stands for any run of " +
      'characters (team-*); ["*"] allows every namespace. Unset or empty: no namespace may use it.',
    maxItems: MAX_ALLOWED_NAMESPACES,
    "x-kubernetes-list-type": "set",
    items: {
      type: "string",
      minLength: 1,
      maxLength: MAX_NAMESPACE_LENGTH,
      pattern: ALLOWED_NAMESPACE_PATTERN,
    },
  };
}

export function pipeStrategySpecSchema(cluster = false): JSONSchemaProps {
  return {
    type: "object",
    description:
      "A pod template for pipe pods, and the params it declares. The strategy's metadata.annotations are " +
      "copied to the pod, except kubectl.kubernetes.io/last-applied-configuration and Quarry's reserved prefixes.",
    required: ["pod"],
    properties: {
      params: paramSpecListSchema(
        "Params the pod declares (Tekton's ParamSpec), substituted as $(params.<name>) in the init container's command, args and env values.",
      ),
      pod: pipePodSchema(),
      outputs: strategyOutputsSchema(),
      allowInlineFiles: {
        type: "boolean",
        description:
          "Whether a request may name its own files (params strategy, strategyKind and files) instead of a Pipe. Default false.",
      },
      ...(cluster ? { allowedNamespaces: allowedNamespacesSchema() } : {}),
    },
  };
}

/** Root schema of PipeStrategy and ClusterPipeStrategy. */
export function pipeStrategySchema(cluster: boolean): JSONSchemaProps {
  return crdRootSchema({
    description: cluster
      ? "An admin-owned pod template for pipe pods, usable by Pipes in the namespaces spec.allowedNamespaces names."
      : "An admin-owned pod template for pipe pods, usable by Pipes in its namespace.",
    spec: pipeStrategySpecSchema(cluster),
    specRequired: true,
  });
}

/** A path in the pipe pod: absolute, clean, with a base name that can be a data key. */
function pipePathSchema(description: string): JSONSchemaProps {
  const base = "self.substring(self.lastIndexOf('/') + 1)";
  return {
    type: "string",
    description,
    minLength: 1,
    maxLength: MAX_PIPE_PATH_LENGTH,
    "x-kubernetes-validations": [
      {
        rule: "self.startsWith('/')",
        message: "must be an absolute path (under the emptyDir the strategy's init container mounts)",
      },
      {
        rule: "!self.contains('//') && !self.contains('/./') && !self.contains('/../') && !self.endsWith('/')",
        message: "must be a clean path: no empty, '.' or '..' segments and no trailing '/'",
      },
      {
        rule:
          `size(${base}) <= ${MAX_DATA_KEY_LENGTH} && ${base}.matches('${PIPE_FILE_NAME_PATTERN}') && ` +
          `${base} != '.' && !${base}.startsWith('..')`,
        message: `the file's name (after the last '/') becomes a data key: it must match ${PIPE_FILE_NAME_PATTERN}, not be '.' and not start with '..'`,
      },
    ],
  };
}

export function pipeEntrySchema(): JSONSchemaProps {
  return {
    type: "object",
    description: "One file the pipe pod writes, and the ConfigMap or Secret it is stored in.",
    required: ["kind", "key"],
    properties: {
      file: pipePathSchema("A file stored whole, under its base name as the data key."),
      envFile: pipePathSchema("A file of KEY=VALUE lines, stored as one data key per line."),
      kind: { type: "string", enum: PIPE_OUTPUT_KINDS, description: "Secret or ConfigMap." },
      key: {
        type: "string",
        minLength: 1,
        maxLength: MAX_PIPE_KEY_LENGTH,
        pattern: PIPE_KEY_PATTERN,
        description:
          "Names the ConfigMap/Secret (<owner>-<pipe>-<key>) and the run's result that holds its name. Unique in the Pipe.",
      },
    },
    "x-kubernetes-validations": [
      { rule: "has(self.file) != has(self.envFile)", message: "set exactly one of file or envFile" },
    ],
  };
}

/** A Pipe's param values: Tekton's param list, each value optionally fixed against a request's. */
export function pipeParamListSchema(): JSONSchemaProps {
  const list = paramListSchema(
    "Values for the strategy's declared params; a request's params override them by name unless fixed. Names are unique.",
  );
  const items = list.items as JSONSchemaProps;
  return {
    ...list,
    items: {
      ...items,
      properties: {
        ...items.properties,
        fixed: {
          type: "boolean",
          description: "A request (or a Pipe run) may not give this param another value. Default false.",
        },
      },
    },
  };
}

export function pipeSpecSchema(): JSONSchemaProps {
  return {
    type: "object",
    description:
      "A pipe task: the strategy whose pod writes the files, its params, and where each file goes.",
    required: ["strategy", "pipe"],
    properties: {
      strategy: {
        type: "object",
        description: "The PipeStrategy (in the Pipe's namespace) or ClusterPipeStrategy that makes the pod.",
        required: ["kind", "name"],
        properties: {
          kind: { type: "string", enum: PIPE_STRATEGY_KINDS },
          name: { type: "string", minLength: 1, maxLength: 253 },
        },
      },
      params: pipeParamListSchema(),
      pipe: {
        type: "array",
        description: "The files to pipe. Keys are unique.",
        minItems: 1,
        maxItems: MAX_PIPE_ENTRIES,
        "x-kubernetes-list-type": "atomic",
        items: pipeEntrySchema(),
        "x-kubernetes-validations": [
          {
            rule: "self.all(e, self.exists_one(f, f.key == e.key))",
            message: "pipe keys must be unique",
          },
        ],
      },
    },
  };
}

/** Root schema of Pipe. */
export function pipeSchema(): JSONSchemaProps {
  return crdRootSchema({
    description:
      "A pipe task (KUDO KEP-17): a pod made from a strategy writes files that Quarry stores as ConfigMaps or Secrets.",
    spec: pipeSpecSchema(),
    specRequired: true,
  });
}
