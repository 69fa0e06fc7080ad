# The host hashes with what it has: only Perl (no md5sum, no fastsum), GNU
# coreutils, or a fastsum; over OpenSSH and over Net::SSH2 (Rex's SSH).
use v5.12.5;
use warnings;
use Test::More;
use File::Temp ();
use lib 't/lib';
use TestHost qw(write_file read_tree);

my $host = TestHost->start;
my $d    = File::Temp->newdir;
write_file( "$d/src/dir$_/f.txt", "file $_\n" ) for 1 .. 20;
write_file( "$d/src/quote's.txt", "q\n" );

# A PATH of only what a minimal host has: sh, Perl, find, od, tar and the
# POSIX tools; no md5sum, no python3, no fastsum.
my $bin = "$d/perl-only-bin";
mkdir $bin;
for my $tool (qw(sh perl find xargs od mktemp tar rm mv chmod chown chgrp mkdir dd sort tr cat grep wc uname head env sleep kill)) {
  chomp( my $real = `sh -c 'command -v $tool'` );
  symlink( $real, "$bin/$tool" ) or die("$tool: $!") if $real;
}
# The same without tar: files go one by one, as stock Rex sends them.
my $no_tar = "$d/no-tar-bin";
mkdir $no_tar;
for my $tool ( grep { $_ ne 'tar' } map { s{.*/}{}r } glob("$bin/*") ) {
  symlink( readlink("$bin/$tool"), "$no_tar/$tool" ) or die("$tool: $!");
}
my $with_fastsum = "$d/fastsum-bin";
mkdir $with_fastsum;
symlink( $ENV{FASTSUM}, "$with_fastsum/fastsum" ) or die $!;

for my $case (
  [ 'perl only, OpenSSH', 'OpenSSH', [$bin],                             'perl' ],
  [ 'coreutils, OpenSSH', 'OpenSSH', [ '/usr/bin', '/bin' ],             'coreutils' ],
  [ 'fastsum, OpenSSH',   'OpenSSH', [ $with_fastsum, '/usr/bin', '/bin' ], 'fastsum' ],
  [ 'perl only, SSH2',    'SSH',     [$bin],                             'perl' ],
  [ 'no tar, OpenSSH',    'OpenSSH', [$no_tar],                          'perl' ],
  [ 'coreutils, SSH2',    'SSH',     [ '/usr/bin', '/bin' ],             'coreutils' ],
  )
{
  my ( $what, $connection, $path, $method ) = @$case;
  my $dst = File::Temp->newdir( DIR => $d );
  write_file( "$dst/dir3/f.txt", "stale\n" );
  my ( $status, $out ) = $host->run_rex(
    use        => 'use Rex::Commands::Fastsum',
    connection => $connection,
    path       => $path,
    body       => "sync_up '$d/src', '$dst'; print \"METHOD \$Rex::Commands::Fastsum::LAST_METHOD\\n\";",
  );
  is( $status, 0, "$what: rex ran" ) or diag($out);
  like( $out, qr/METHOD $method$/m, "$what: hashed there by $method" );
  is_deeply( read_tree("$dst"), read_tree("$d/src"), "$what: the host has the tree" );
}

done_testing;
