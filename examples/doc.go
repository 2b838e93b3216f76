// Package examples holds deployment examples for connect-init: a Docker
// Swarm stack (swarm/stack.yml), a Docker Compose file
// (compose/docker-compose.yml) and a Kubernetes StatefulSet
// (kubernetes/statefulset.yaml), described in README.md.
//
// It has no code. Its tests parse the examples and the repository's
// Dockerfile, since no container engine is available to run them, and check
// that they name only settings and subcommands connect-init really has, and
// that they keep the deployment properties the two incidents call for.
package examples
