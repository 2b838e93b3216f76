package plugins

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// RemotePlugin is one entry of a Connect worker's
// GET /connector-plugins?connectorsOnly=false (PluginInfo): a class, its
// type and the version its version() returned. Connect leaves "version"
// out for a plugin without one ("undefined"). The list holds connectors,
// transformations, predicates, converters and header converters, not
// config providers, REST extensions or client config policies.
type RemotePlugin struct {
	// Class is the plugin's binary class name.
	Class string `json:"class"`
	// Type is its plugin type, spelled as Kind.
	Type Kind `json:"type"`
	// Version is what its version() returned; "" when it has none.
	Version string `json:"version,omitempty"`
}

// Peer is one other member of the worker group and the plugins it reports.
type Peer struct {
	// Member names the peer in messages: its advertised REST URL.
	Member string `json:"member"`
	// Plugins is its GET /connector-plugins?connectorsOnly=false.
	Plugins []RemotePlugin `json:"plugins"`
}

// DecodeConnectorPlugins decodes the body of
// GET /connector-plugins?connectorsOnly=false. Unknown fields are ignored
// (newer workers may add some); an entry without a class is an error, as
// is anything but a JSON array.
func DecodeConnectorPlugins(r io.Reader) ([]RemotePlugin, error) {
	var list []RemotePlugin
	if err := json.NewDecoder(r).Decode(&list); err != nil {
		return nil, fmt.Errorf("plugins: decode GET /connector-plugins: %w", err)
	}
	for i := range list {
		list[i].Class = strings.TrimSpace(list[i].Class)
		if list[i].Class == "" {
			return nil, fmt.Errorf("plugins: decode GET /connector-plugins: entry %d has no class", i)
		}
		if list[i].Version == "undefined" {
			list[i].Version = ""
		}
	}
	return list, nil
}

// asPlugins views a peer's list as plugins, for the lookup rules this
// worker's inventory uses. How the peer found each one is not reported;
// all are discovered plugins, so aliases reach them.
func asPlugins(member string, list []RemotePlugin) []Plugin {
	out := make([]Plugin, 0, len(list))
	for _, rp := range list {
		out = append(out, Plugin{Class: rp.Class, Kind: rp.Type, Version: rp.Version, Location: member})
	}
	return out
}

// PeerInventory views a member's GET /connector-plugins answer as an
// inventory, so that doctor can judge any member against the others with
// Verdict, as the startup check judges this worker.
func PeerInventory(p Peer) *Inventory {
	return &Inventory{Member: p.Member, Plugins: sortPlugins(asPlugins(p.Member, p.Plugins))}
}
