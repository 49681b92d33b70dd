package command

import (
	"net"
	"net/url"
)

// URLDestination is the host and port an http or https URL connects to
// (the scheme's port when the URL names none); false for anything else.
func URLDestination(raw string) (Destination, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return Destination{}, false
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	d, err := ParseDestination(net.JoinHostPort(u.Hostname(), port))
	return d, err == nil
}
