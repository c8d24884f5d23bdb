package preflight

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubeedge-windows/edgecore/config"
)

const (
	nameClock = "Clock"
	// nameCloudCore is the one cloud row before join, when the protocol
	// is not known yet.
	nameCloudCore = "cloudcore"
)

// Reasons of the rows skipped before join.
const (
	skipCloudNotJoined = "not joined yet: join checks cloudcore itself"
	skipClockNotJoined = "not joined yet: join has cloudcore issue the certificates the clock is compared with"
)

func checkCloudCore(ctx context.Context, cfg Config, p Probes) []Row {
	if cfg.NotJoined {
		return []Row{skip(nameCloudCore, skipCloudNotJoined)}
	}
	var rows []Row
	for _, e := range cfg.CloudCore {
		rows = append(rows, checkEndpoint(ctx, cfg, p, e))
	}
	return rows
}

func checkEndpoint(ctx context.Context, cfg Config, p Probes, e Endpoint) Row {
	if fe := e.Problem; fe != nil {
		if fe.Type == field.ErrorTypeRequired {
			return fail(e.Name, e.Field+" is empty", "set "+e.Field+" to "+fe.Detail)
		}
		return fail(e.Name, fmt.Sprintf("%s %q is not valid: %s", e.Field, e.Value, fe.Detail),
			"correct "+e.Field+" in the configuration file, or join again to rewrite it")
	}
	host, port, err := net.SplitHostPort(e.Address)
	if err != nil {
		// config.CloudEndpoints gives host:port or a Problem.
		return fail(e.Name, fmt.Sprintf("%s %q: %v", e.Field, e.Address, err), "correct "+e.Field+" in the configuration file")
	}
	dial, how := p.Dial, ""
	fix := fmt.Sprintf("check %s, that cloudcore listens on port %s and that no firewall blocks it (Test-NetConnection %s -Port %s)",
		e.Field, port, host, port)
	if e.Field == config.FieldTunnelServer {
		fix = fmt.Sprintf("%s (Test-NetConnection %s -Port %s)", config.TunnelFix, host, port)
	}
	if e.Transport == config.TransportQUIC {
		dial, how = p.DialQUIC, " (QUIC)"
		// QUIC is UDP: Test-NetConnection, which speaks TCP only, cannot
		// test the port.
		fix = fmt.Sprintf("check %s, that cloudcore's quic server is enabled (modules.cloudHub.quic in cloudcore.yaml) and listens on UDP port %s, "+
			"and that no firewall blocks UDP port %s", e.Field, port, port)
	}
	if dial == nil {
		return notProbed(e.Name)
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	if err := dial(ctx, e.Address); err != nil {
		return fail(e.Name, e.Address+how+" unreachable: "+oneLine(err.Error()), fix)
	}
	return pass(e.Name, e.Address+how+" reachable")
}

// checkClock compares the clock with the certificates edgehub presents and
// trusts: a clock outside their window makes every TLS handshake with
// cloudcore fail with a message about certificates, not about time.
func checkClock(cfg Config, p Probes) []Row {
	if cfg.NotJoined {
		return []Row{skip(nameClock, skipClockNotJoined)}
	}
	if p.Now == nil || p.Certificate == nil {
		return []Row{notProbed(nameClock)}
	}
	now := p.Now().UTC()
	var rows []Row
	var checked, missing []string
	for _, path := range cfg.Certificates {
		v, err := p.Certificate(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			missing = append(missing, path)
			continue
		case err != nil:
			rows = append(rows, warn(nameClock, "cannot read "+path+": "+oneLine(err.Error()),
				"rejoin the node with a token from keadm gettoken to rewrite its certificates"))
			continue
		case now.Before(v.NotBefore):
			rows = append(rows, fail(nameClock, fmt.Sprintf("the clock (%s) is %s before %s becomes valid (%s)",
				stamp(now), v.NotBefore.Sub(now).Round(time.Second), path, stamp(v.NotBefore)),
				"set the clock: w32tm /resync, or Set-Date if the host has no time source"))
		case now.After(v.NotAfter):
			rows = append(rows, fail(nameClock, fmt.Sprintf("%s expired on %s (the clock says %s)", path, stamp(v.NotAfter), stamp(now)),
				"if the clock is right, rejoin the node with a token from keadm gettoken; if not, w32tm /resync"))
		default:
			checked = append(checked, path)
		}
	}
	if len(rows) > 0 {
		return rows
	}
	if len(checked) == 0 {
		detail := "nothing to compare yet: no certificates configured"
		if len(missing) > 0 {
			detail = "nothing to compare yet: no certificate at " + strings.Join(missing, ", ") + " (join creates them)"
		}
		return []Row{pass(nameClock, detail)}
	}
	return []Row{pass(nameClock, fmt.Sprintf("%s is within the validity of %s", stamp(now), strings.Join(checked, ", ")))}
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") }
