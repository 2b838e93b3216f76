package startup

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/connect-init/connect-init/checks"
	"github.com/connect-init/connect-init/connect/parity"
	"github.com/connect-init/connect-init/connect/registry"
	"github.com/connect-init/connect-init/gate"
	"github.com/connect-init/connect-init/settings"
	"github.com/connect-init/connect-init/workerconfig"
)

func parityWorker(url, valueConverter string) *settings.Config {
	return &settings.Config{GroupID: "g", AdvertisedURL: url, Flavour: workerconfig.ConfluentUB,
		Topics: []settings.TopicSpec{{Role: settings.RoleConfig, Name: "c"}},
		Worker: workerconfig.Properties{"group.id": "g", "config.storage.topic": "c", "offset.storage.topic": "o", "status.storage.topic": "s",
			"key.converter": "K", "value.converter": valueConverter}}
}

// parityGroup is a Stable group of the live members at urls, each
// registered with the fingerprint of cfgs[url] (none: predates it).
func parityGroup(cfgs map[string]*settings.Config, urls ...string) *gate.GroupReport {
	rep := &gate.GroupReport{State: gate.GroupStable, Protocol: "sessioned",
		Identity: &gate.IdentityReport{Registry: &registry.View{Exists: true}}}
	for i, u := range urls {
		rep.Members = append(rep.Members, gate.GroupMember{MemberID: "m" + string(rune('0'+i)), URL: u, ClientHost: "/10.0.0.1"})
		w := registry.Worker{Cluster: registry.Cluster{GroupID: "g", ConfigTopic: "c"}, URL: u}
		if c := cfgs[u]; c != nil {
			w.Settings = parity.Of(c.Worker, "")
		}
		rep.Identity.Registry.Workers = append(rep.Identity.Registry.Workers, w)
	}
	return rep
}

func TestParityRefusesAnotherValueConverter(t *testing.T) {
	w1, w2 := parityWorker("http://w1:8083", "J"), parityWorker("http://w2:8083", "J")
	me := parityWorker("http://w3:8083", "A")
	rep := parityGroup(map[string]*settings.Config{w1.AdvertisedURL: w1, w2.AdvertisedURL: w2}, w1.AdvertisedURL, w2.AdvertisedURL)
	rs := checks.Errors(parityResults(me, rep, func(string) bool { return false }))
	if len(rs) != 1 || rs[0].ID != parity.IDSettingDiffers {
		t.Fatalf("%s", checks.Join(rs))
	}
	for _, want := range []string{"value.converter (CONNECT_VALUE_CONVERTER)=A", "J on http://w1:8083, http://w2:8083", "set value.converter (CONNECT_VALUE_CONVERTER) on this worker to the group's value (J)"} {
		if !strings.Contains(rs[0].String(), want) {
			t.Errorf("lacks %q: %s", want, rs[0])
		}
	}
	// The same settings, or peers without a fingerprint: nothing.
	if rs := parityResults(parityWorker("http://w3:8083", "J"), rep, nil); len(rs) != 0 {
		t.Errorf("same settings: %s", checks.Join(rs))
	}
	if rs := parityResults(me, parityGroup(nil, w1.AdvertisedURL), nil); len(rs) != 0 {
		t.Errorf("peers predating the fingerprint: %s", checks.Join(rs))
	}
}

// A live member advertising this worker's URL is refused when something
// answers there before the exec (another process); this worker's previous
// life, gone but not yet timed out of the group, is not.
func TestParitySharedAdvertisedURL(t *testing.T) {
	w1 := parityWorker("http://w1:8083", "J")
	me := parityWorker("http://w1:8083", "J")
	rep := parityGroup(map[string]*settings.Config{w1.AdvertisedURL: w1}, w1.AdvertisedURL)
	if rs := parityResults(me, rep, func(string) bool { return false }); len(rs) != 0 {
		t.Errorf("previous life: %s", checks.Join(rs))
	}
	rs := parityResults(me, rep, func(u string) bool { return u == "http://w1:8083" })
	if len(rs) != 1 || rs[0].ID != parity.IDAdvertisedURLShared || rs[0].Severity != checks.Error {
		t.Fatalf("shared: %s", checks.Join(rs))
	}
}

// The protocol in use needs no fingerprint: eager joining a sessioned
// group is refused.
func TestParityEagerJoiningSessioned(t *testing.T) {
	me := parityWorker("http://w3:8083", "J")
	me.Worker["connect.protocol"] = "eager"
	rep := parityGroup(nil, "http://w1:8083")
	rs := checks.Errors(parityResults(me, rep, nil))
	if len(rs) != 1 || rs[0].ID != parity.IDStagedTransition || !strings.Contains(rs[0].Summary, "connect.protocol (CONNECT_CONNECT_PROTOCOL)=eager") {
		t.Fatalf("%s", checks.Join(rs))
	}
}

// run refuses drift with a group gate error naming the setting and the
// fix; prepare, which joins nothing, only warns.
func TestCheckParityRefusesInRunWarnsInPrepare(t *testing.T) {
	w1 := parityWorker("http://w1:8083", "J")
	rep := parityGroup(map[string]*settings.Config{w1.AdvertisedURL: w1}, w1.AdvertisedURL)
	var logs strings.Builder
	log := slog.New(slog.NewTextHandler(&logs, nil))
	st := &state{cfg: parityWorker("http://w3:8083", "A"), group: rep, withExec: true}
	err := checkParity(context.Background(), st, log, nil)
	var ge *gate.GateError
	if !errors.As(err, &ge) || ge.Gate != "group" || !strings.Contains(err.Error(), "settings parity: worker http://w3:8083 has value.converter") ||
		!strings.Contains(ge.Fix, "set value.converter") {
		t.Fatalf("run: %v", err)
	}
	st.withExec = false
	if err := checkParity(context.Background(), st, log, nil); err != nil {
		t.Fatalf("prepare refused: %v", err)
	}
	if !strings.Contains(logs.String(), "worker settings differ from the group's") {
		t.Errorf("prepare did not warn:\n%s", logs.String())
	}
}
