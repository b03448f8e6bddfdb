ssh -vo ProxyCommand=id host -F x uptime; scp -S x a b:c; sftp -b f h
