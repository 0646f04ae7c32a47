import assert from "node:assert/strict";
import { test } from "node:test";
import type { OwnerReference } from "@quarry/api";
import { controllerRef, sharedOwnerRef, withSharedOwner } from "./owners.ts";

const runA: OwnerReference = { apiVersion: "tekton.dev/v1beta1", kind: "CustomRun", name: "a", uid: "uid-a" };
const runB: OwnerReference = { apiVersion: "tekton.dev/v1beta1", kind: "CustomRun", name: "b", uid: "uid-b" };

test("the creator is the controller and blocks owner deletion by default (Tekton's NewControllerRef)", () => {
  assert.deepEqual(controllerRef(runA), { ...runA, controller: true, blockOwnerDeletion: true });
  assert.equal(controllerRef({ ...runA, blockOwnerDeletion: false }).blockOwnerDeletion, false);
});

test("an adopter is never a controller, even if it asks", () => {
  const ref = sharedOwnerRef({ ...runB, controller: true });
  assert.equal(ref.controller, undefined);
  assert.deepEqual(ref, runB);
});

test("adding an owner keeps the existing list whole and in order", () => {
  const first = controllerRef(runA);
  const other: OwnerReference = { apiVersion: "v1", kind: "ConfigMap", name: "c", uid: "uid-c" };
  assert.deepEqual(withSharedOwner([first, other], runB), [first, other, runB]);
});

test("no change when the owner is already there, matched by uid", () => {
  assert.equal(withSharedOwner([controllerRef(runA)], { ...runA, name: "renamed?" }), undefined);
  assert.deepEqual(withSharedOwner([controllerRef(runA)], { ...runA, uid: "uid-a2" })?.length, 2);
});

test("a request without owners gets the adopter as its only owner", () => {
  assert.deepEqual(withSharedOwner(undefined, runB), [runB]);
});
