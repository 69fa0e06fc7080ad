# The modules load, export what the POD documents, and agree on their
# version (no server needed: this runs wherever Rex is installed).
use v5.12.5;
use warnings;
use Test::More;
use FindBin;

plan skip_all => 'Rex is not installed' if !eval { require Rex; 1 };

use_ok('Rex::Commands::Fastsum');
use_ok('Rex::Commands::Fastsum::Tar');
is_deeply(
  [ sort @Rex::Commands::Fastsum::EXPORT ],
  [ sort qw(sync_up sync_down md5 md5_many checksums) ],
  'exports sync_up, sync_down, md5, md5_many and checksums'
);
can_ok( 'Rex::Commands::Fastsum', @Rex::Commands::Fastsum::EXPORT );
like( $Rex::Commands::Fastsum::VERSION, qr/^\d+\.\d+\.\d+$/, 'a three-part version' );
is( $Rex::Commands::Fastsum::Tar::VERSION, $Rex::Commands::Fastsum::VERSION,
  'Tar.pm carries the distribution version' );
# In the fastsum repository the distribution takes the workspace's
# version (Cargo.toml, the one place scripts/release reads it from); the
# unpacked distribution has no Cargo.toml beside it and skips this.
my $cargo = "$FindBin::Bin/../../../Cargo.toml";
SKIP: {
  skip 'not in the fastsum repository (no ../../Cargo.toml)', 1 if !-f $cargo;
  open my $fh, '<', $cargo or die "$cargo: $!";
  my ($workspace) = do { local $/; <$fh> } =~ /^\[workspace\.package\]\s*\nversion = "([^"]+)"/m;
  is( $Rex::Commands::Fastsum::VERSION, $workspace, "the workspace's version, $cargo" );
}
done_testing;
