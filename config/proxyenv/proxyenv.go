// Package proxyenv decides the proxy environment join gives the containerd
// and edgecore services (the service manager's per-service Environment):
// HTTP_PROXY and HTTPS_PROXY from --proxy, and NO_PROXY from --no-proxy
// plus what must never go through a proxy: loopback, the node's own
// addresses, the pod and service ranges, and cloudcore (whose QUIC hub an
// HTTP proxy cannot carry, and whose websocket client, upstream's, dials
// directly). A proxy URL's credentials never leave this package in a
// message: Redacted is what may be shown.
package proxyenv

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strings"

	"github.com/kubeedge-windows/edgecore/config/redact"
)

// Flags.
const (
	FlagProxy   = "--proxy"
	FlagNoProxy = "--no-proxy"
)

// Variables are the environment variables join sets, in the order it
// writes them.
var Variables = []string{"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY"}

// Inputs are what the environment is made of.
type Inputs struct {
	// Proxy is --proxy: http(s)://[user:password@]host:port.
	Proxy string
	// NoProxy is --no-proxy: hosts, domains (.example.com) and CIDR
	// ranges that bypass the proxy, besides the defaults.
	NoProxy []string
	// PodRanges and ServiceRanges are the node's pod range, the
	// cluster's pod range and the service range (CIDR).
	PodRanges, ServiceRanges []string
	// NodeAddresses are the node's own addresses.
	NodeAddresses []string
	// CloudHosts are cloudcore's hosts.
	CloudHosts []string
}

// Loopback always bypasses the proxy.
var Loopback = []string{"localhost", "127.0.0.1", "::1"}

// Validate checks the proxy URL and the --no-proxy entries; the error
// names the flag and never the URL's credentials.
func Validate(proxy string, noProxy []string) error {
	if proxy == "" {
		if len(noProxy) > 0 {
			return fmt.Errorf("%s is given without %s; give the proxy too", FlagNoProxy, FlagProxy)
		}
		return nil
	}
	u, err := url.Parse(proxy)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return fmt.Errorf("%s %q is not an http(s) URL with a host; give e.g. http://proxy.example:3128", FlagProxy, redact.URL(proxy))
	}
	if u.Path != "" && u.Path != "/" || u.RawQuery != "" {
		return fmt.Errorf("%s %q has a path or query; give the proxy's scheme, host and port only", FlagProxy, redact.URL(proxy))
	}
	var errs []error
	for _, e := range noProxy {
		if strings.TrimSpace(e) == "" || strings.ContainsAny(e, " \t\r\n/=") && !isCIDR(e) {
			errs = append(errs, fmt.Errorf("%s entry %q is not a host, domain or CIDR range", FlagNoProxy, e))
		}
	}
	return errors.Join(errs...)
}

// Range is a range NO_PROXY must hold: the flag that gives it, its value
// and what it is.
type Range struct {
	Flag, Value, What string
}

// ValidateRanges checks, with a proxy, that each range is given as a CIDR
// range: NO_PROXY holds them so that traffic to pods and services never
// goes to the proxy, and join, which runs before the node exists, cannot
// read them from the cluster. Each error names the flag and the fix.
func ValidateRanges(proxy string, ranges ...Range) []error {
	if proxy == "" {
		return nil
	}
	var errs []error
	for _, r := range ranges {
		switch v := strings.TrimSpace(r.Value); {
		case v == "":
			errs = append(errs, fmt.Errorf("%s is not given: with %s, NO_PROXY holds %s so that traffic to it never goes to the proxy; give %s", r.Flag, FlagProxy, r.What, r.Flag))
		case !isCIDR(v):
			errs = append(errs, fmt.Errorf("%s %q is not a CIDR range (NO_PROXY holds %s); give it as e.g. 10.96.0.0/12", r.Flag, r.Value, r.What))
		}
	}
	return errs
}

func isCIDR(s string) bool {
	_, _, err := net.ParseCIDR(s)
	return err == nil
}

// Environment is the services' environment, NAME=value lines, nil without
// a proxy.
func Environment(in Inputs) []string {
	if in.Proxy == "" {
		return nil
	}
	return []string{"HTTP_PROXY=" + in.Proxy, "HTTPS_PROXY=" + in.Proxy, "NO_PROXY=" + strings.Join(NoProxy(in), ",")}
}

// NoProxy is the NO_PROXY list: loopback, the node's addresses, the pod
// and service ranges, cloudcore, then --no-proxy; each once.
func NoProxy(in Inputs) []string {
	var out []string
	seen := map[string]bool{}
	add := func(list ...string) {
		for _, e := range list {
			e = strings.TrimSpace(e)
			if e != "" && !seen[strings.ToLower(e)] {
				seen[strings.ToLower(e)] = true
				out = append(out, e)
			}
		}
	}
	add(Loopback...)
	add(in.NodeAddresses...)
	add(in.PodRanges...)
	add(in.ServiceRanges...)
	add(in.CloudHosts...)
	add(in.NoProxy...)
	return out
}

// Redacted is an environment line as it may be shown: a URL's user
// information hidden.
func Redacted(line string) string {
	name, value, ok := strings.Cut(line, "=")
	if !ok {
		return redact.String(line)
	}
	return name + "=" + redact.URL(value)
}

// Of reads the proxy variables out of a service's environment, sorted by
// name, for `service status`; other variables are left out.
func Of(env []string) []string {
	var out []string
	for _, line := range env {
		name, _, _ := strings.Cut(line, "=")
		for _, v := range Variables {
			if strings.EqualFold(name, v) {
				out = append(out, Redacted(line))
			}
		}
	}
	sort.Strings(out)
	return out
}
