package preflight

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"strings"
	"time"
)

const nameClock = "Clock"

func checkCloudCore(ctx context.Context, cfg Config, p Probes) []Row {
	var rows []Row
	for _, e := range cfg.CloudCore {
		rows = append(rows, checkEndpoint(ctx, cfg, p, e))
	}
	return rows
}

func checkEndpoint(ctx context.Context, cfg Config, p Probes, e Endpoint) Row {
	if p.Dial == nil {
		return notProbed(e.Name)
	}
	if strings.TrimSpace(e.Address) == "" {
		return fail(e.Name, e.Field+" is empty", "set "+e.Field+" to cloudcore's address (keadm join writes it)")
	}
	host, port, err := net.SplitHostPort(e.Address)
	if err != nil || host == "" || port == "" {
		return fail(e.Name, fmt.Sprintf("%s %q is not host:port", e.Field, e.Address), "write "+e.Field+" as host:port, e.g. 192.0.2.10:10000")
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	if err := p.Dial(ctx, e.Address); err != nil {
		return fail(e.Name, e.Address+" unreachable: "+oneLine(err.Error()),
			fmt.Sprintf("check %s, that cloudcore listens on port %s and that no firewall blocks it (Test-NetConnection %s -Port %s)", e.Field, port, host, port))
	}
	return pass(e.Name, e.Address+" reachable")
}

// checkClock compares the clock with the certificates edgehub presents and
// trusts: a clock outside their window makes every TLS handshake with
// cloudcore fail with a message about certificates, not about time.
func checkClock(cfg Config, p Probes) []Row {
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
