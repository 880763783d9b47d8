/// Keys made with the openssl CLI, so PEM parsing is tested against a foreign encoder.
enum PEMFixtures {
    /// `openssl ecparam -name prime256v1 -genkey -noout` (SEC 1 "EC PRIVATE KEY").
    static let traditionalEC = """
        -----BEGIN EC PRIVATE KEY-----
        MHcCAQEEILtvreFvM8oA4qZGSZV8ufAZiw9Gaox9QdFoD8rb2C9RoAoGCCqGSM49
        AwEHoUQDQgAENKiTBu/cZ1jqRitMOwdn52HJJKKLAXb3/oUS0p59CpYwoqS/JXaM
        +0IqbAbTc/M6lSmH3e1nWnUV0V5vfkG1kQ==
        -----END EC PRIVATE KEY-----
        """

    /// PKCS#8 P-256 key encrypted with passphrase "secret".
    static let encryptedPKCS8 = """
        -----BEGIN ENCRYPTED PRIVATE KEY-----
        MIHsMFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAcBAhFA+PYZDvztAICCAAw
        DAYIKoZIhvcNAgkFADAdBglghkgBZQMEAQIEEAW3CMdXTZ7lGTji7fPABnMEgZCR
        YNjeuanqsuxzyL/giR7b4g8kEpuPSVm3q48VWWPiwmjBKvZ6jzJAmBw7Vlug7NJx
        izq47TAZ6yi8MZhUzMuL8gqvHUsfKQNptKmGhNyV9VzNIzKITv20/ev6zkAyZdZB
        PN/yqjg4rLYp5a0YV/sa3bzjzv3tRwFXHf+Q50g+tLKLFHX3XxMo/LM8sGGMXsY=
        -----END ENCRYPTED PRIVATE KEY-----
        """

    /// 1024-bit RSA: below the RFC 7518 minimum.
    static let rsa1024Private = """
        -----BEGIN PRIVATE KEY-----
        MIICdgIBADANBgkqhkiG9w0BAQEFAASCAmAwggJcAgEAAoGBAJEFIr3/KYqHYuuv
        wUD5yio/Hc1RGo7LSycgZykhz9SEfeT0i4mzG4WmVZcoClALP6EkKqw26D0Qenqi
        DWupldKcZTTecd3U8VUBhmIFzCBMzI2euG1wFi7Fjkat+ciTL2kY2z5u8UEqX/eL
        RO/UsZTqB27SuXunP4DQurbZiO1ZAgMBAAECgYAm9M85ZML/AJF1KJhsYO2K3bue
        vOu6cif1EcJEjV2sBA9hosOdMOzywRT67vmeOPdVzUZdTr6iMLwGF2QtiLfDHVU5
        PcYiXeX73vNgq9mnmJBGYDF/+6Ionv1EEcSVUj4DzcWW+bfThxPVYVCcQ807GkWG
        ewXZDtVSMrf8TAoTdQJBAMD2g+TqmCOCxro2t13LOXjPlwfVOkwKcGRorQWKgXz7
        zrOFS3Vf+8xghxG12DKzQ0N3G1waPvA1hLam6Kd3grMCQQDAZSiMTZWy8GYLLeDK
        UPlooaUFMyU5Cp7LJ57gtvNYhQiqcea2SaMHfHk5/7xK8R3nwggpEYBwRoFbpDrK
        MaXDAkAILSnvlEU4E/2JvHHOpqLbzKgQq+dZe4PBrXHPb0wHWMAseTR2V8fapCh1
        BqiPlWr/O9fL8kzCbvIdrzrihbzjAkA6G9N9XMmD/Bu18KteL8rEkV3YDjSF3/FK
        BrNzx44EBFozsKcwE1mMH0o1/EmQkPapUu9ICCM0xfa4CQhAnXIlAkEAuNcYjPeh
        +vmF6SDrtKtHCPfToPlsWNNVSIiHpLX1BtA7i5H6/ZR8a0Hk26VmDJ04ohtw/Au4
        rO6Nn1Q/cR4O2Q==
        -----END PRIVATE KEY-----
        """

    static let rsa1024Public = """
        -----BEGIN PUBLIC KEY-----
        MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQCRBSK9/ymKh2Lrr8FA+coqPx3N
        URqOy0snIGcpIc/UhH3k9IuJsxuFplWXKApQCz+hJCqsNug9EHp6og1rqZXSnGU0
        3nHd1PFVAYZiBcwgTMyNnrhtcBYuxY5GrfnIky9pGNs+bvFBKl/3i0Tv1LGU6gdu
        0rl7pz+A0Lq22YjtWQIDAQAB
        -----END PUBLIC KEY-----
        """

    /// `printf hello | openssl dgst -sha256 -sign rsa1024.pem | base64`: a valid RS256
    /// signature that must still be refused for the key size.
    static let rsa1024SignatureOverHello =
        "h3T+CLlC3KCXMDUv6xRMxh6S+QGWw2Hy1/7tWKFY06i9j1qQRRmYJltf8aTT95/byWurWHtFgD1lWMyp7pdUl51Xu0liSh7Wj13zM8lVC29C2DHMucp9o75FV/vS4GB9ytmUcmQgdkOfhGBnPNoapIslYGI5AUTQoioZaHFAvSc="

    static let ed448Public = """
        -----BEGIN PUBLIC KEY-----
        MEMwBQYDK2VxAzoAIfDx6rWxcazJAVPmMGvqzEM/FKbnP5L9YL6crlGGOZ5CwzgU
        HL2VQlFYd4caqaGdb2VvBnf5DCSA
        -----END PUBLIC KEY-----
        """

    static let secp256k1Public = """
        -----BEGIN PUBLIC KEY-----
        MFYwEAYHKoZIzj0CAQYFK4EEAAoDQgAENTLwafL7Ncd3hTjHk42ZIAqDcyy6bS93
        dwMqifMd9SWXRWcuIVknIaOD4NqDbhbxxEK2+mpxFW5PUOGXLl79qA==
        -----END PUBLIC KEY-----
        """
}
