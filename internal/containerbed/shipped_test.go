package containerbed

import (
	"os"
	"strings"
	"testing"
)

// TestShippedDockerfile: the bed builds the project's Dockerfile from its
// dist stage on, unchanged, and refuses a Dockerfile with a stage before
// dist that it would leave out.
func TestShippedDockerfile(t *testing.T) {
	src, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	df, err := shippedDockerfile(string(src))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ARG RELEASE=", "ARG CP_BASE=", "FROM ${RELEASE} AS dist", "AS debezium", "AS apache", "AS confluent",
		"COPY --from=dist /connect-init /usr/local/bin/connect-init", `ENTRYPOINT ["connect-init", "run", "--"]`, "HEALTHCHECK"} {
		if !strings.Contains(df, want) {
			t.Errorf("the bed's Dockerfile lacks %q:\n%s", want, df)
		}
	}
	for _, never := range []string{"AS build", "AS provider", "AS release", "--mount", "go build", "mvn "} {
		if strings.Contains(df, never) {
			t.Errorf("the bed's Dockerfile keeps %q, which the classic builder cannot build here:\n%s", never, df)
		}
	}
	// Every line of the targets is the Dockerfile's own.
	_, targets, _ := strings.Cut(string(src), "FROM ${RELEASE} AS dist")
	if !strings.HasSuffix(df, targets) {
		t.Errorf("the targets differ from the Dockerfile's")
	}
	extra := strings.Replace(string(src), "FROM scratch AS release", "FROM alpine AS helper\nRUN true\nFROM scratch AS release", 1)
	if _, err := shippedDockerfile(extra); err == nil || !strings.Contains(err.Error(), "helper") {
		t.Errorf("a new stage before dist: err = %v, want it named", err)
	}
	if _, err := shippedDockerfile(strings.Replace(string(src), " AS dist", " AS binaries", 1)); err == nil {
		t.Error("a Dockerfile without a dist stage was accepted")
	}
}
