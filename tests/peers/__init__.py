"""Test peers: small servers that speak a debug protocol, with faults a test can switch on."""
