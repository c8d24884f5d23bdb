package preflight

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"sort"

	"github.com/kubeedge-windows/edgecore/config/ospath"
	"github.com/kubeedge-windows/edgecore/config/registries"
)

const nameRegistry = "Registry"

// checkRegistries asks each registry the node's hosts.toml files send
// pulls to (join --registry-config writes them into cfg.RegistryDir)
// whether it answers, with the CA and client certificate the file names:
// every mirror, and a registry's own server when the file gives it a CA, a
// client certificate or no verification. No row without the folder.
func checkRegistries(ctx context.Context, cfg Config, p Probes) []Row {
	if cfg.RegistryDir == "" || p.ReadSubdirs == nil || p.ReadFile == nil {
		return nil
	}
	dirs, err := p.ReadSubdirs(cfg.RegistryDir)
	if err != nil {
		return nil // no registry configuration
	}
	sort.Strings(dirs)
	var rows []Row
	for _, d := range dirs {
		path := ospath.Join(pathOS(cfg.RegistryDir), cfg.RegistryDir, d, "hosts.toml")
		data, err := p.ReadFile(path)
		if err != nil {
			continue // a folder of certificates only
		}
		eps, err := registries.ReadHosts(d, data)
		if err != nil {
			rows = append(rows, fail(nameRegistry+" "+d, oneLine(err.Error()), "correct "+path+", or run join again with --registry-config"))
			continue
		}
		for _, e := range eps {
			if !e.Mirror && e.CA == "" && e.ClientCert == "" && !e.SkipVerify {
				continue // the registry itself, as anyone reaches it
			}
			rows = append(rows, checkRegistry(ctx, cfg, p, e, path))
		}
	}
	return rows
}

func checkRegistry(ctx context.Context, cfg Config, p Probes, e registries.Endpoint, path string) Row {
	name := nameRegistry + " " + e.Registry
	if p.Registry == nil {
		return notProbed(name)
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	err := p.Registry(ctx, e)
	what := e.URL
	if e.CA != "" {
		what += " with the CA " + e.CA
	}
	if e.SkipVerify {
		what += " (its certificate is not verified: insecure_skip_verify)"
	}
	if err != nil {
		var unknown x509.UnknownAuthorityError
		fix := "check that the registry runs and that this host reaches it (Test-NetConnection), and that " + path + " names it right"
		if errors.As(err, &unknown) || isCertificateError(err) {
			fix = "the registry's certificate is not signed by " + orDefault(e.CA, "a CA this host trusts") +
				": give the CA that signed it as configs.<host>.tls.ca_file in the registry configuration and run join again"
		}
		return fail(name, what+" does not answer: "+oneLine(err.Error()), fix)
	}
	return pass(name, what+" answers")
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func isCertificateError(err error) bool {
	var v *tls.CertificateVerificationError
	var h x509.HostnameError
	var c x509.CertificateInvalidError
	return errors.As(err, &v) || errors.As(err, &h) || errors.As(err, &c)
}

// probeRegistry asks the registry API root of e (/v2/) over TLS with its
// CA and client certificate: 200 or 401 (it wants credentials) is an
// answer.
func probeRegistry(ctx context.Context, e registries.Endpoint) error {
	u, err := url.Parse(e.URL)
	if err != nil {
		return err
	}
	tc := &tls.Config{InsecureSkipVerify: e.SkipVerify} //nolint:gosec // the operator's opt-in, named in the row
	if e.CA != "" {
		pem, err := os.ReadFile(e.CA)
		if err != nil {
			return err
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return fmt.Errorf("%s holds no PEM certificate", e.CA)
		}
		tc.RootCAs = pool
	}
	if e.ClientCert != "" {
		pair, err := tls.LoadX509KeyPair(e.ClientCert, e.ClientKey)
		if err != nil {
			return err
		}
		tc.Certificates = []tls.Certificate{pair}
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: tc, Proxy: http.ProxyFromEnvironment},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.Scheme+"://"+u.Host+"/v2/", nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusUnauthorized {
		return fmt.Errorf("it answers %s to GET /v2/, not a registry's 200 or 401", resp.Status)
	}
	return nil
}
