package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/connect-init/connect-init/exitcode"
	"github.com/connect-init/connect-init/settings"
)

// TestConfigDebeziumOnlyVariables: on a Debezium image, a setup with only
// Debezium's own variables gives the worker configuration Debezium's
// entrypoint writes (GROUP_ID, the base file's replication factor 1, the
// advertised host), with each value's source, the flavour logged as
// detected, and the secret hidden.
func TestConfigDebeziumOnlyVariables(t *testing.T) {
	env := []string{"BOOTSTRAP_SERVERS=kafka:9092", "GROUP_ID=dbz", "CONFIG_STORAGE_TOPIC=dbz_configs", "OFFSET_STORAGE_TOPIC=dbz_offsets",
		"STATUS_STORAGE_TOPIC=dbz_statuses", "ADVERTISED_HOST_NAME=connect-1",
		"CONNECT_SASL_JAAS_CONFIG=x required password=\"" + secretMarker + "\";"}
	var stdout, stderr bytes.Buffer
	c := newCLI(env, &stdout, &stderr)
	c.options = settings.Options{Root: imageRoot(t, "debezium"), HostAddress: func() (string, error) { return "192.0.2.10", nil }}
	if code := c.run(context.Background(), []string{"config", "--json"}); code != exitcode.OK {
		t.Fatalf("exit %d:\n%s%s", code, stdout.String(), stderr.String())
	}
	var doc configDoc
	decodeEnvelope(t, stdout.String(), &doc)
	if doc.Flavour.Name != "debezium" || !doc.Flavour.Detected || doc.Derived == nil {
		t.Fatalf("flavour %+v derived %+v error %q", doc.Flavour, doc.Derived, doc.Error)
	}
	got := map[string]configEntry{}
	for _, e := range doc.Worker {
		got[e.Key] = e
	}
	for key, want := range map[string][2]string{
		"group.id":                          {"dbz", "GROUP_ID"},
		"config.storage.topic":              {"dbz_configs", "CONFIG_STORAGE_TOPIC"},
		"config.storage.replication.factor": {"1", doc.BaseFile + ":"},
		"rest.advertised.host.name":         {"connect-1", "ADVERTISED_HOST_NAME"},
		"rest.advertised.port":              {"8083", "ADVERTISED_PORT (Debezium entrypoint default 8083)"},
		"sasl.jaas.config":                  {"[hidden]", "CONNECT_SASL_JAAS_CONFIG"},
	} {
		e := got[key]
		if e.Value != want[0] || !strings.HasPrefix(e.Source, want[1]) {
			t.Errorf("%s = %q from %q, want %q from %q", key, e.Value, e.Source, want[0], want[1])
		}
	}
	if doc.Derived.AdvertisedURL != "http://connect-1:8083/" || doc.Derived.GroupID != "dbz" || doc.Derived.Topics[0].ReplicationFactor != 1 {
		t.Errorf("derived %+v", doc.Derived)
	}
	if !strings.Contains(stderr.String(), `msg="image flavour"`) || !strings.Contains(stderr.String(), "flavour=debezium") {
		t.Errorf("the detected flavour is not logged:\n%s", stderr.String())
	}
	if strings.Contains(stdout.String()+stderr.String(), secretMarker) {
		t.Error("a secret reached the output")
	}
}

// TestConfigRedactsRESTSecrets: the REST password and token are shown as
// set, never their values, in text and JSON, and also when another
// setting is bad; the files are shown by path.
func TestConfigRedactsRESTSecrets(t *testing.T) {
	for _, extra := range [][]string{nil, {"CONNECT_INIT_LOCK_PERMITS=0"}} {
		for _, args := range [][]string{{"config"}, {"config", "--json"}} {
			env := append([]string{"CONNECT_BOOTSTRAP_SERVERS=kafka:9092", "CONNECT_GROUP_ID=g", "CONNECT_CONFIG_STORAGE_TOPIC=c",
				"CONNECT_OFFSET_STORAGE_TOPIC=o", "CONNECT_STATUS_STORAGE_TOPIC=s", "CONNECT_REST_ADVERTISED_HOST_NAME=w",
				"CONNECT_KEY_CONVERTER=org.apache.kafka.connect.json.JsonConverter", "CONNECT_VALUE_CONVERTER=org.apache.kafka.connect.json.JsonConverter",
				"CONNECT_INIT_REST_USERNAME=admin", "CONNECT_INIT_REST_PASSWORD=" + secretMarker}, extra...)
			var stdout, stderr bytes.Buffer
			c := newCLI(env, &stdout, &stderr)
			c.run(context.Background(), args)
			out := stdout.String() + stderr.String()
			if strings.Contains(out, secretMarker) {
				t.Errorf("%v %v: the password reached the output:\n%s", extra, args, out)
			}
			if !strings.Contains(stdout.String(), settings.Redacted) || !strings.Contains(stdout.String(), "CONNECT_INIT_REST_PASSWORD") {
				t.Errorf("%v %v: the password is not listed as set:\n%s", extra, args, stdout.String())
			}
		}
	}
}

// TestConfigFlavourSetByHand: a flavour set by CONNECT_INIT_IMAGE or
// --image is reported as set, not detected.
func TestConfigFlavourSetByHand(t *testing.T) {
	env, _ := interfaceEnv(t)
	for _, tc := range []struct {
		env  []string
		args []string
	}{
		{append(append([]string{}, env...), "CONNECT_INIT_IMAGE=apache", "CONNECT_INIT_WORKER_CONFIG=/dev/null"), nil},
		{append(append([]string{}, env...), "CONNECT_INIT_WORKER_CONFIG=/dev/null"), []string{"--image=apache"}},
	} {
		_, stdout, stderr := runIn(t, tc.env, append([]string{"config", "--json"}, tc.args...)...)
		var doc configDoc
		decodeEnvelope(t, stdout, &doc)
		if doc.Flavour.Name != "apache" || doc.Flavour.Detected {
			t.Errorf("%q: flavour %+v, want apache, not detected\n%s", tc.args, doc.Flavour, stderr)
		}
	}
}
