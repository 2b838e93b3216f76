package gate

import (
	"strings"
	"testing"

	"github.com/IBM/sarama"

	"github.com/connect-init/connect-init/checks"
	"github.com/connect-init/connect-init/connect/parity"
)

// AdminEOS reads each broker's ApiVersions; a broker that serves no
// transactions (a Kafka-compatible service, or one before 0.11) is
// refused by name with what it lacks.
func TestEOSBrokerVersionsFromApiVersions(t *testing.T) {
	old := sarama.NewMockBroker(t, 1)
	defer old.Close()
	full := []sarama.ApiVersionsResponseKey{
		{ApiKey: 3, MinVersion: 0, MaxVersion: 12}, {ApiKey: 18, MinVersion: 0, MaxVersion: 4},
		{ApiKey: 2, MinVersion: 1, MaxVersion: 9}, {ApiKey: 10, MinVersion: 0, MaxVersion: 6},
	}
	withTxn := append(append([]sarama.ApiVersionsResponseKey(nil), full...),
		sarama.ApiVersionsResponseKey{ApiKey: 22, MaxVersion: 5}, sarama.ApiVersionsResponseKey{ApiKey: 24, MaxVersion: 5},
		sarama.ApiVersionsResponseKey{ApiKey: 26, MaxVersion: 4})
	fresh := sarama.NewMockBroker(t, 2)
	defer fresh.Close()
	for _, b := range []struct {
		mb   *sarama.MockBroker
		keys []sarama.ApiVersionsResponseKey
	}{{old, full}, {fresh, withTxn}} {
		b.mb.SetHandlerByMap(map[string]sarama.MockResponse{
			"ApiVersionsRequest": sarama.NewMockApiVersionsResponse(t).SetApiKeys(b.keys),
			"MetadataRequest": sarama.NewMockMetadataResponse(t).SetController(1).
				SetBroker(old.Addr(), old.BrokerID()).SetBroker(fresh.Addr(), fresh.BrokerID()),
		})
	}
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V2_8_0_0
	client, err := sarama.NewClient([]string{old.Addr()}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	vs, err := AdminEOS{Client: client}.APIVersions()
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 2 {
		t.Fatalf("read %d brokers, want 2: %v", len(vs), vs)
	}
	if m := parity.MissingEOSAPIs(vs[2]); len(m) != 0 {
		t.Errorf("a broker with transactions lacks %v", m)
	}
	f := &fakeEOS{exists: true, versions: vs, aclErr: sarama.ErrSecurityDisabled}
	rs, err := EOSResults(t.Context(), EOSWorker{Group: "g", Support: "preparing"}, nil, f, nil)
	if err != nil {
		t.Fatal(err)
	}
	errs := checks.Errors(rs)
	if len(errs) != 1 || errs[0].ID != parity.IDBrokersTooOld {
		t.Fatalf("want one %s: %s", parity.IDBrokersTooOld, checks.Join(rs))
	}
	text := errs[0].Subject + " | " + errs[0].Evidence + " | " + errs[0].Fix
	for _, want := range []string{"brokers 1", "broker 1 lacks InitProducerId, AddPartitionsToTxn, EndTxn", "exactly.once.source.support=disabled"} {
		if !strings.Contains(text, want) {
			t.Errorf("lacks %q: %s", want, text)
		}
	}
	if strings.Contains(text, "broker 2") {
		t.Errorf("names the broker with transactions: %s", text)
	}
}

func TestMissingEOSAPIs(t *testing.T) {
	got := parity.MissingEOSAPIs(map[int16]int16{2: 1, 10: 0, 22: 0, 24: 0, 26: 0})
	want := "FindCoordinator v1 (the broker has v0); ListOffsets v2 (the broker has v1)"
	if strings.Join(got, "; ") != want {
		t.Errorf("got %q, want %q", strings.Join(got, "; "), want)
	}
}
